import { describe, expect, it } from 'vitest';
import { GraphQLError } from 'graphql';
import { maskedResult } from '../errors/mask-errors.js';
import { jsonOf } from './result-json.js';

describe('a streamed payload', () => {
  it('masks an unexpected error as yoga masks a query, keeps a GraphQL error, and reports what it masked', () => {
    const masked: unknown[] = [];
    const leak = new GraphQLError('connect ECONNREFUSED 10.0.0.7:5432', { originalError: new Error('connect ECONNREFUSED 10.0.0.7:5432') });
    const typed = new GraphQLError('Subgraph failed', { extensions: { code: 'SUBGRAPH_ERROR' } });
    const event = maskedResult({ data: { a: null }, errors: [leak, typed] }, (error) => masked.push(error));
    expect(event.errors?.map((e) => [e.message, e.extensions.code])).toEqual([
      ['Unexpected error.', 'INTERNAL_SERVER_ERROR'],
      ['Subgraph failed', 'SUBGRAPH_ERROR'],
    ]);
    expect(masked).toEqual([leak]);
    const clean = { data: { a: 1 } };
    expect(maskedResult(clean, () => undefined)).toBe(clean);
  });

  it('serialises a result once and without the extensions yoga keeps for itself', () => {
    const result = { data: null, errors: [new GraphQLError('Too many', { extensions: { code: 'SUBSCRIPTION_LIMIT', http: { status: 429 } } })] };
    const json = jsonOf(result);
    expect(JSON.parse(json)).toEqual({ data: null, errors: [{ message: 'Too many', extensions: { code: 'SUBSCRIPTION_LIMIT' } }] });
    expect(jsonOf(result)).toBe(json);
    const masked = maskedResult({ data: null, errors: [new GraphQLError('boom', { originalError: new Error('boom') })] }, undefined);
    expect(JSON.parse(jsonOf({ ...masked, extensions: { http: { status: 500 }, completeness: { complete: false } } }))).toEqual({
      data: null,
      errors: [{ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
      extensions: { completeness: { complete: false } },
    });
  });
});
