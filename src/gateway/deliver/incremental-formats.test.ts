import { GraphQLError, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { splitDeferred } from './deferred-parts.js';
import { INCREMENTAL_FORMATS, type Delivery } from './incremental-formats.js';

const split = splitDeferred(parse('{ product { id ... @defer(label: "more") { name } } }'), undefined, undefined)!;
const delivery: Delivery = { id: '0', part: split.parts[0], path: ['product'], source: {}, typeName: 'Product' };
const complete = { complete: true, missing: [] };
const failed = new GraphQLError('boom', { path: ['product', 'name'], extensions: { code: 'SUBGRAPH_ERROR' } });

describe('incremental wire formats', () => {
  it('writes deferSpec=20220824: a result with hasNext, then incremental entries at their paths with labels', () => {
    const format = INCREMENTAL_FORMATS['defer-20220824'];
    expect(format.initial({ result: { data: { product: { id: '1' } } }, found: [delivery], completeness: complete, hasNext: true })).toEqual({ data: { product: { id: '1' } }, hasNext: true, extensions: { completeness: complete } });
    expect(format.later({ delivered: [{ delivery, result: { data: { name: 'x' } } }], found: [], unplaced: [], hasNext: false, completeness: complete })).toEqual({
      incremental: [{ data: { name: 'x' }, path: ['product'], label: 'more' }],
      hasNext: false,
      extensions: { completeness: complete },
    });
  });

  it('writes incrementalSpec=v0.2: pending announced with the data that makes them possible, then incremental and completed by id', () => {
    const format = INCREMENTAL_FORMATS['incremental-v0.2'];
    expect(format.initial({ result: { data: { product: { id: '1' } } }, found: [delivery], completeness: complete, hasNext: true })).toMatchObject({ pending: [{ id: '0', path: ['product'], label: 'more' }], hasNext: true });
    expect(format.later({ delivered: [{ delivery, result: { data: { name: 'x' } } }], found: [], unplaced: [], hasNext: false, completeness: complete })).toMatchObject({
      incremental: [{ id: '0', data: { name: 'x' } }],
      completed: [{ id: '0' }],
      hasNext: false,
    });
  });

  it('ends with the first payload when it announces no part', () => {
    for (const format of Object.values(INCREMENTAL_FORMATS)) {
      const first = format.initial({ result: { data: { product: null } }, found: [], completeness: complete, hasNext: false });
      expect(first).toMatchObject({ data: { product: null }, hasNext: false });
      expect(first).not.toHaveProperty('pending');
    }
  });

  it('closes a part whose non-null field failed: data null in 20220824, completed with its errors in v0.2', () => {
    const result = { data: null, errors: [failed] };
    const missing = { complete: false, missing: [{ path: ['product', 'name'], code: 'SUBGRAPH_ERROR' }] };
    expect(INCREMENTAL_FORMATS['defer-20220824'].later({ delivered: [{ delivery, result }], found: [], unplaced: [], hasNext: false, completeness: missing })).toMatchObject({
      incremental: [{ data: null, path: ['product'], errors: [failed] }],
    });
    const v02 = INCREMENTAL_FORMATS['incremental-v0.2'].later({ delivered: [{ delivery, result }], found: [], unplaced: [], hasNext: false, completeness: missing });
    expect(v02).not.toHaveProperty('incremental');
    expect(v02).toMatchObject({ completed: [{ id: '0', errors: [failed] }], extensions: { completeness: missing } });
  });
});
