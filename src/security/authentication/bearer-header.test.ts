// Unit tests of the bearer header: reading `Authorization: Bearer`, and the `WWW-Authenticate` challenges (RFC 6750).
import { describe, expect, it } from 'vitest';
import { AUTH_FAILURE_REASONS as R } from './auth-result.js';
import { extractBearer, wwwAuthenticate } from './bearer-header.js';

describe('extractBearer and WWW-Authenticate', () => {
  it('reads one bearer token, any scheme case', () => {
    expect(extractBearer(undefined)).toEqual({ ok: true, token: undefined });
    expect(extractBearer(null)).toEqual({ ok: true, token: undefined });
    expect(extractBearer('Bearer abc.def.ghi')).toEqual({ ok: true, token: 'abc.def.ghi' });
    expect(extractBearer('bearer   abc.def.ghi  ')).toEqual({ ok: true, token: 'abc.def.ghi' });
  });

  it('refuses malformed headers with invalid_request', () => {
    const cases: [string, string][] = [
      ['', R.malformedHeader],
      ['Basic dXNlcjpwYXNz', R.unsupportedScheme],
      ['Bearer', R.missingToken],
      ['Bearer ', R.missingToken],
      ['Bearer a b', R.malformedHeader],
      ['Bearer abc, Bearer def', R.malformedHeader],
      ['Bearer "abc"', R.malformedHeader],
      ['Bearerabc', R.unsupportedScheme],
    ];
    for (const [header, reason] of cases) {
      expect(extractBearer(header), header).toEqual({ ok: false, code: 'UNAUTHENTICATED', reason, error: 'invalid_request' });
    }
  });

  it('builds RFC 6750 challenges', async () => {
    expect(wwwAuthenticate(undefined)).toBe('Bearer realm="switchyard"');
    const expired = { ok: false as const, code: 'UNAUTHENTICATED' as const, reason: R.expired, error: 'invalid_token' as const };
    expect(wwwAuthenticate(expired)).toBe('Bearer realm="switchyard", error="invalid_token", error_description="token expired"');
    expect(wwwAuthenticate({ ok: false, code: 'AUTH_UNAVAILABLE', reason: R.keysUnavailable })).toBeUndefined();
    // error_description may not carry quotes or backslashes (RFC 6750 §3).
    for (const reason of Object.values(R)) expect(reason).toMatch(/^[\x20\x21\x23-\x5B\x5D-\x7E]+$/);
  });
});
