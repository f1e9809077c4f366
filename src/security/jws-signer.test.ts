import { describe, expect, it } from 'vitest';
import { decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { createJwtSigner } from './jws-signer.js';
import { SIGNING_ALGORITHMS } from './signing-keys.js';

describe('createJwtSigner', () => {
  it.each(SIGNING_ALGORITHMS)('signs %s tokens that jose verifies with the public key, header and claims intact', async (alg) => {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const sign = createJwtSigner({ ...(await exportJWK(privateKey)), ext: true }, alg, { kid: 'k1', typ: 'at+jwt' });
    const claims = { iss: 'switchyard', sub: 'alice', aud: 'reviews', exp: Math.floor(Date.now() / 1000) + 60, scope: 'reviews:read', act: { sub: 'switchyard-router' }, note: 'naïve ✓' };
    const token = sign(claims);
    expect(decodeProtectedHeader(token)).toEqual({ alg, kid: 'k1', typ: 'at+jwt' });
    const { payload } = await jwtVerify(token, publicKey, { algorithms: [alg], audience: 'reviews', issuer: 'switchyard', typ: 'at+jwt' });
    expect(payload).toEqual(claims);
  });

  it('makes signatures that fail under another key and after any change to the claims', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const other = await generateKeyPair('ES256');
    const token = createJwtSigner(await exportJWK(privateKey), 'ES256', {})({ sub: 'alice' });
    expect((await jwtVerify(token, publicKey)).payload).toEqual({ sub: 'alice' });
    await expect(jwtVerify(token, other.publicKey)).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
    const [header, , signature] = token.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ sub: 'mallory' })).toString('base64url')}.${signature}`;
    await expect(jwtVerify(forged, publicKey)).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  });

  it('refuses an algorithm it does not know', async () => {
    const jwk = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    expect(() => createJwtSigner(jwk, 'HS256' as never, {})).toThrow(/unsupported signing algorithm HS256/);
  });
});
