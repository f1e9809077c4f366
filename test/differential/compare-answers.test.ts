// Comparing answers: key order and error wording do not count, paths, codes, data and status do.
import { describe, expect, it } from 'vitest';
import { canonical, comparable, differences } from './compare-answers.js';

describe('comparable', () => {
  it('keeps status, data and sorted {path, code} of the errors, not their messages or locations', () => {
    const answer = {
      status: 200,
      body: {
        data: { a: null },
        errors: [
          { message: 'one wording', path: ['b', 0], locations: [{ line: 1, column: 2 }], extensions: { code: 'SUBGRAPH_ERROR' } },
          { message: 'another', path: ['a'], extensions: { code: 'X' } },
        ],
      },
    };
    expect(comparable(answer)).toEqual({ status: 200, data: { a: null }, errors: [{ path: 'a', code: 'X' }, { path: 'b.0', code: 'SUBGRAPH_ERROR' }] });
  });
});

describe('canonical and differences', () => {
  it('ignores key order and names each differing path', () => {
    expect(canonical({ b: 1, a: { d: 2, c: 3 } })).toBe(canonical({ a: { c: 3, d: 2 }, b: 1 }));
    expect(differences({ data: { x: [1, { y: 'a' }] } }, { data: { x: [1, { y: 'b' }], z: null } })).toEqual(['data.x.1.y: "a" ≠ "b"', 'data.z: undefined ≠ null']);
  });
});
