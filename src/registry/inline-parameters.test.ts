// Parameters inlined for the embedded server: as pg would send them, and never a placeholder without its value.
import { describe, expect, it } from 'vitest';
import { inlineParameters } from './inline-parameters.js';

describe('inlineParameters', () => {
  it('inlines values as escaped literals, as pg would send them', () => {
    expect(inlineParameters('select $1, $2, $3, $4, $10', ["it's", 5, null, true, 'x', 'x', 'x', 'x', 'x', 'ten'])).toBe(
      "select 'it''s', '5', NULL, 'true', 'ten'",
    );
    // A backslash makes pg use the E'' form, which keeps it literal.
    expect(inlineParameters('select $1::text[]', [['a', 'b"c']])).toBe(`select  E'{"a","b\\\\"c"}'::text[]`);
  });

  it('refuses a placeholder without a value', () => {
    expect(() => inlineParameters('select $2', [1])).toThrow(/\$2/);
  });
});
