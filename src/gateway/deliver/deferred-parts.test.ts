import { parse, print } from 'graphql';
import { describe, expect, it } from 'vitest';
import { MARKER_PREFIX, splitDeferred, takeMarkers } from './deferred-parts.js';

describe('deferred parts of a document', () => {
  it('replaces each active @defer by a marker with its type condition and conditions, and keeps its selections as a part', () => {
    const document = parse('query Q($on: Boolean!) { product { id ... on Product @defer(label: "more") @include(if: $on) { name reviews { id } } } }');
    const split = splitDeferred(document, undefined, { on: true })!;
    expect(split.parts).toHaveLength(1);
    expect(split.parts[0]).toMatchObject({ id: 0, label: 'more', typeCondition: 'Product' });
    expect(print(split.parts[0].selectionSet)).toBe(print(parse('{ name reviews { id } }').definitions[0] as never).replace(/^query /, ''));
    expect(print(split.document)).toContain(`... on Product @include(if: $on) {\n      ${MARKER_PREFIX}0: __typename`);
    expect(print(split.document)).not.toContain('@defer');
  });

  it('has no split when no @defer is active: none written, or each one\'s if false (a literal or a variable)', () => {
    expect(splitDeferred(parse('{ product { id } }'), undefined, undefined)).toBeUndefined();
    expect(splitDeferred(parse('{ product { ... @defer(if: false) { id } } }'), undefined, undefined)).toBeUndefined();
    const byVariable = parse('query Q($d: Boolean = true) { product { ... @defer(if: $d) { id } } }');
    expect(splitDeferred(byVariable, undefined, { d: false })).toBeUndefined();
    expect(splitDeferred(byVariable, undefined, {})?.parts).toHaveLength(1);
  });

  it('makes a nested @defer a marker inside its outer part, and a deferred spread a part selecting the fragment', () => {
    const document = parse('{ product { ... @defer { name ...More @defer(label: "inner") } } } fragment More on Product { price }');
    const split = splitDeferred(document, undefined, undefined)!;
    expect(split.parts.map((part) => part.label)).toEqual([undefined, 'inner']);
    expect(print(split.parts[0].selectionSet)).toContain(`${MARKER_PREFIX}1: __typename`);
    expect(print(split.parts[1].selectionSet)).toBe('{\n  ...More\n}');
    expect(split.parts[1].typeCondition).toBe('Product');
  });

  it('keeps one split per document and if-values (memoised)', () => {
    const document = parse('query Q($d: Boolean) { product { ... @defer(if: $d) { id } } }');
    expect(splitDeferred(document, undefined, { d: true })).toBe(splitDeferred(document, undefined, {}));
  });

  it('finds and removes the markers of an answer, with the tree objects and type names at their places (list items each)', () => {
    const split = splitDeferred(parse('{ products { id ... @defer { name } } }'), undefined, undefined)!;
    const tree = { products: [{ id: '1', name: 'a', __typename: 'Product' }, { id: '2', name: 'b' }] };
    const answer = { products: [{ id: '1', [`${MARKER_PREFIX}0`]: 'Product' }, { id: '2', [`${MARKER_PREFIX}0`]: 'Product' }] };
    const places = takeMarkers(split, answer, tree, []);
    expect(answer).toEqual({ products: [{ id: '1' }, { id: '2' }] });
    expect(places.map((place) => [place.path, place.source, place.typeName])).toEqual([
      [['products', 0], tree.products[0], 'Product'],
      [['products', 1], tree.products[1], 'Product'],
    ]);
  });
});
