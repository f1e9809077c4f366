// Purge tags: the same entity gives the same tag however its key was written.
import { describe, expect, it } from 'vitest';
import { entityTag, subgraphTag, typeTag } from './tags.js';

/** The canonical key an entity tag carries. */
const canonicalKey = (key: Record<string, unknown>) => entityTag('T', key).slice('e:T:'.length);

describe('purge tags', () => {
  it('name a subgraph and a type', () => {
    expect(subgraphTag('products')).toBe('s:products');
    expect(typeTag('Product')).toBe('t:Product');
  });

  it('give one entity one tag whatever the key order, scalar types or __typename', () => {
    const tag = entityTag('Product', { upc: '1', sku: 'a' });
    expect(entityTag('Product', { sku: 'a', upc: 1 })).toBe(tag);
    expect(entityTag('Product', { __typename: 'Product', upc: '1', sku: 'a' })).toBe(tag);
    expect(tag).toBe('e:Product:{"sku":"a","upc":"1"}');
  });

  it('canonicalise nested key objects recursively and keep arrays in order', () => {
    const a = canonicalKey({ owner: { id: 7, __typename: 'User', org: 'x' }, parts: [2, '1'] });
    const b = canonicalKey({ parts: ['2', 1], owner: { org: 'x', id: '7' } });
    expect(a).toBe(b);
    expect(a).toBe('{"owner":{"id":"7","org":"x"},"parts":["2","1"]}');
    expect(canonicalKey({ parts: [1, 2] })).not.toBe(canonicalKey({ parts: [2, 1] }));
  });

  it('sort integer-like field names too, and tell null from the string "null"', () => {
    expect(canonicalKey({ b: 1, 10: 2, 9: 3 })).toBe('{"10":"2","9":"3","b":"1"}');
    expect(canonicalKey({ id: null })).not.toBe(canonicalKey({ id: 'null' }));
  });

  it('tell different entities and types apart', () => {
    expect(entityTag('Product', { upc: '1' })).not.toBe(entityTag('Product', { upc: '2' }));
    expect(entityTag('Product', { id: '1' })).not.toBe(entityTag('User', { id: '1' }));
  });
});
