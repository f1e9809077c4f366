// `switchyard cache purge` flags: every combination it refuses before opening the database, and what it records otherwise.
import { describe, expect, it } from 'vitest';
import { purgeFromFlags } from './cache-commands.js';

describe('purgeFromFlags', () => {
  it.each([
    [{}, /name what to purge: --type T .*--subgraph S, or --all/],
    [{ key: '{"id":"1"}' }, /--key needs --type/],
    [{ key: '{"id":"1"}', subgraph: 'product' }, /--key needs --type/],
    [{ all: true, type: 'Product' }, /--all purges everything: give it alone/],
    [{ all: true, subgraph: 'product' }, /--all purges everything: give it alone/],
    [{ type: 'Product', key: '{id:1}' }, /--key must be JSON/],
  ])('refuses %j with a message that says what to write', (flags, message) => {
    expect(() => purgeFromFlags(flags)).toThrow(message);
  });

  it('reads one entity, a type in a subgraph, and everything', () => {
    expect(purgeFromFlags({ type: 'Product', key: '{"id":"1"}' })).toEqual({ typeName: 'Product', entityKey: { id: '1' } });
    expect(purgeFromFlags({ type: 'Inventory', subgraph: 'inventory' })).toEqual({ typeName: 'Inventory', subgraph: 'inventory' });
    expect(purgeFromFlags({ all: true })).toEqual({ all: true });
  });
});
