// The JSON depth scan: counts nesting outside strings, stops at the first level too deep, keeps state across chunks.
import { describe, expect, it } from 'vitest';
import { JsonDepthScanner, jsonDeeperThan } from './json-depth.js';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('JsonDepthScanner', () => {
  it('accepts nesting up to the limit and refuses one level more (the outer value is level 1)', () => {
    expect(jsonDeeperThan('{"a":[1,{"b":2}]}', 3)).toBe(false);
    expect(jsonDeeperThan('{"a":[1,{"b":[2]}]}', 3)).toBe(true);
    expect(jsonDeeperThan('[[],[],[]]', 2)).toBe(false);
    expect(jsonDeeperThan('1', 1)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonDeeperThan('{"q":"[[[[{{{{"}', 1)).toBe(false);
    expect(jsonDeeperThan('{"q":"\\"[[[[\\\\"}', 1)).toBe(false);
    expect(jsonDeeperThan('{"q":"\\\\",  "v":[[1]]}', 2)).toBe(true);
  });

  it('keeps its state between chunks, even a string or an escape split across them', () => {
    const scanner = new JsonDepthScanner(3);
    expect(scanner.feed(bytes('{"a":"[[[\\'))).toBe(true);
    expect(scanner.feed(bytes('"[[[", "b": ['))).toBe(true);
    expect(scanner.feed(bytes('[1]'))).toBe(true);
    expect(scanner.feed(bytes(', [[2]]'))).toBe(false);
    expect(scanner.exceeded).toBe(true);
    expect(scanner.feed(bytes('1'))).toBe(false);
  });

  it('reads multi-byte UTF-8 without mistaking its bytes for brackets or quotes', () => {
    const scanner = new JsonDepthScanner(2);
    expect(scanner.feed(bytes('{"ключ":"値[[[","é":["🎈"]}'))).toBe(true);
  });

  it('stops at the first level too deep: 100,000 nested arrays cost one pass up to the limit', () => {
    expect(jsonDeeperThan(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 64)).toBe(true);
  });
});
