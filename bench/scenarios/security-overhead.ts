// Scenario: what verifying user JWTs, minting per-subgraph tokens and writing an audit row cost on the demo product page (issue 4: under 10%).
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { fastDemoBackend, productPageRequest } from '../backends/demo-subgraphs.js';
import { switchyardRegistryVariant } from '../gateways/switchyard.js';
import type { Scenario } from '../lib/types.js';

const ISSUER = 'https://bench.switchyard.invalid/';
const AUDIENCE = 'switchyard-bench';
/** Distinct users (distinct `sub`, so distinct tokens): no verification result can be reused across requests in flight. */
const TOKEN_POOL_SIZE = 2_000;

/** Filled by setup(): the public key the router verifies with, and the pool of signed user tokens. */
const keys: { publicKeyPem?: string; tokens: string[] } = { tokens: [] };

/** An ES256 key pair and TOKEN_POOL_SIZE user tokens signed with it, valid for an hour. */
async function mintTokens(): Promise<void> {
  if (keys.publicKeyPem) return;
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const now = Math.floor(Date.now() / 1000);
  const tokens: string[] = [];
  for (let i = 0; i < TOKEN_POOL_SIZE; i++) {
    tokens.push(
      await new SignJWT({ scope: 'catalog:read' })
        .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(`bench-user-${i}`)
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .sign(privateKey),
    );
  }
  keys.tokens = tokens;
  keys.publicKeyPem = await exportSPKI(publicKey);
}

/** Auth off, no per-subgraph tokens, no audit: the router with every security feature disabled. */
export const securityOff = switchyardRegistryVariant({
  name: 'security-off',
  description: 'registry mode; SWITCHYARD_AUTH_MODE=off, SWITCHYARD_SUBGRAPH_TOKENS=false, SWITCHYARD_AUDIT=false',
  env: { SWITCHYARD_AUTH_MODE: 'off', SWITCHYARD_SUBGRAPH_TOKENS: 'false', SWITCHYARD_AUDIT: 'false' },
});

/** Every request verified (ES256, issuer, audience), a token minted per subgraph call, an audit row per request. */
export const securityOn = switchyardRegistryVariant({
  name: 'security-on',
  description: 'registry mode; SWITCHYARD_AUTH_MODE=required (ES256 JWT_PUBLIC_KEY, issuer, audience), SWITCHYARD_SUBGRAPH_TOKENS=true, SWITCHYARD_AUDIT=true',
  env: () => {
    if (!keys.publicKeyPem) throw new Error('security-on: no public key yet (the scenario setup mints it)');
    return {
      SWITCHYARD_AUTH_MODE: 'required',
      JWT_PUBLIC_KEY: keys.publicKeyPem,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
      SWITCHYARD_SUBGRAPH_TOKENS: 'true',
      SWITCHYARD_AUDIT: 'true',
    };
  },
});

/** Authentication and per-subgraph tokens without the audit log: splits the audit's share of the cost. */
export const securityNoAudit = switchyardRegistryVariant({
  name: 'auth-and-tokens',
  description: 'registry mode; as security-on but SWITCHYARD_AUDIT=false',
  env: () => {
    if (!keys.publicKeyPem) throw new Error('auth-and-tokens: no public key yet (the scenario setup mints it)');
    return { SWITCHYARD_AUTH_MODE: 'required', JWT_PUBLIC_KEY: keys.publicKeyPem, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE, SWITCHYARD_SUBGRAPH_TOKENS: 'true', SWITCHYARD_AUDIT: 'false' };
  },
});

/** Every variant receives the same signed tokens (the baseline ignores them), cycling through the pool. */
export const securityOverhead: Scenario = {
  name: 'security-overhead',
  summary: 'demo product page (3 subgraphs), registry mode: JWT verification + subgraph tokens + audit on vs all off',
  backend: fastDemoBackend,
  variants: [securityOff, securityNoAudit, securityOn],
  // Measured in steady state: every user has been seen once before round 1 (the pass before it gives the first-request figure).
  headerPeriod: TOKEN_POOL_SIZE,
  setup: mintTokens,
  request: productPageRequest,
  headers: (n) => ({ authorization: `Bearer ${keys.tokens[n % keys.tokens.length]}` }),
  target: { variant: securityOn.name, minRatio: 0.9, statement: 'authentication, subgraph tokens and audit together cost under 10% of throughput' },
};
