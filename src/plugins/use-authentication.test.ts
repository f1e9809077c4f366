// Unit tests of the authentication plugin's memory of verified tokens: which tokens skip the signature check.
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import type { Authenticator } from '../security/authentication/authenticate.js';
import { useAuthentication } from './use-authentication.js';

/** An authenticator that accepts every token until `expiresAt`, counting the checks it is asked for. */
function countingAuthenticator(expiresAt: number) {
  const checked: string[] = [];
  const authenticator: Authenticator = {
    async authenticate(token) {
      checked.push(token);
      return { ok: true, principal: { subject: token, scopes: [], claims: {}, token, expiresAt: new Date(expiresAt) } };
    },
  };
  return { authenticator, checked };
}

function router(authenticator: Authenticator, options: { verifiedCacheSize?: number; now?: () => number } = {}) {
  const schema = createSchema({ typeDefs: 'type Query { hello: String }', resolvers: { Query: { hello: () => 'hi' } } });
  const yoga = createYoga({ schema, plugins: [useAuthentication({ mode: 'required', authenticator, ...options })], logging: false });
  return async (token: string) => {
    const response = await yoga.fetch('http://router.test/graphql', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{"query":"{ hello }"}' });
    expect(response.status).toBe(200);
  };
}

describe('useAuthentication: verified tokens', () => {
  it('keeps at most verifiedCacheSize tokens, dropping the least recently used', async () => {
    const { authenticator, checked } = countingAuthenticator(Date.now() + 3_600_000);
    const send = router(authenticator, { verifiedCacheSize: 2 });
    for (const token of ['a', 'b', 'a', 'c']) await send(token); // a is used again before c comes: b is the least recent
    expect(checked).toEqual(['a', 'b', 'c']);
    await send('a');
    await send('c');
    expect(checked).toEqual(['a', 'b', 'c']);
    await send('b');
    expect(checked).toEqual(['a', 'b', 'c', 'b']);
  });

  it('checks a remembered token again once it has expired', async () => {
    let now = 0;
    const { authenticator, checked } = countingAuthenticator(1_000);
    const send = router(authenticator, { now: () => now });
    await send('a');
    await send('a');
    expect(checked).toEqual(['a']);
    now = 1_000;
    await send('a');
    expect(checked).toEqual(['a', 'a']);
  });
});
