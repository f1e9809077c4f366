// Publishes the public keys of the per-subgraph tokens at /.well-known/jwks.json, for subgraphs to verify them.
import type { Plugin } from 'graphql-yoga';
import type { KeyRing } from '../security/signing-keys.js';

export function useJwks(keyRing: KeyRing): Plugin {
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (url.pathname !== '/.well-known/jwks.json' || request.method !== 'GET') return;
      // Only subgraph-token keys: a subgraph trusting this set can never accept a development user token.
      endResponse(
        new fetchAPI.Response(JSON.stringify(keyRing.jwks('subgraph-token')), {
          status: 200,
          // Short: a rotation reaches subgraphs within a minute; they also refetch on an unknown kid.
          headers: { 'content-type': 'application/jwk-set+json', 'cache-control': 'public, max-age=60' },
        }),
      );
    },
  };
}
