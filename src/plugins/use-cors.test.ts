// useCors in process (yoga.fetch): preflights allowed and refused, the headers of an answer, Vary kept with another plugin's, the router's own host.
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { CorsBook } from '../registry/cors-book.js';
import { createLogger } from '../telemetry/logger.js';
import { useCors } from './use-cors.js';

/** A plugin that varies its answers on Accept, as content negotiation does. */
const varyOnAccept: Plugin = {
  onResponse({ response }) {
    response.headers.set('vary', 'Accept');
  },
};

function server(book: CorsBook) {
  return createYoga({
    schema: createSchema({ typeDefs: /* GraphQL */ `type Query { ok: Boolean }`, resolvers: { Query: { ok: () => true } } }),
    landingPage: false,
    graphiql: false,
    cors: false,
    plugins: [varyOnAccept, useCors({ book, logger: createLogger({ level: 'silent' }) })],
  });
}

const accessControl = (response: Response) => [...response.headers.keys()].filter((name) => name.startsWith('access-control-'));

describe('useCors', () => {
  const book = new CorsBook(['https://app.example.com']);
  book.replace([{ origin: 'https://*.example.com', methods: ['POST'], headers: ['content-type'], credentials: true, maxAgeSeconds: 0 }]);
  const yoga = server(book);

  it('answers an allowed preflight with the rule: a max age of 0 is sent, not dropped', async () => {
    const response = await yoga.fetch('http://router.test/graphql', { method: 'OPTIONS', headers: { origin: 'https://a.example.com', 'access-control-request-method': 'POST' } });
    expect(response.status).toBe(204);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      'access-control-allow-origin': 'https://a.example.com',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'content-type',
      'access-control-allow-credentials': 'true',
      'access-control-max-age': '0',
      'content-length': '0',
    });
  });

  it('answers a refused preflight 204 with no Access-Control-* header, still varying on Origin', async () => {
    const response = await yoga.fetch('http://router.test/graphql', { method: 'OPTIONS', headers: { origin: 'https://example.com', 'access-control-request-method': 'POST' } });
    expect(response.status).toBe(204);
    expect(accessControl(response)).toEqual([]);
    expect(response.headers.get('vary')).toBe('Accept, Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
  });

  it('marks an allowed answer, never with credentials unless the rule allows them, and adds Origin to another plugin\'s Vary', async () => {
    const response = await yoga.fetch('http://router.test/graphql?query={ok}', { headers: { origin: 'https://app.example.com' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(response.headers.get('vary')).toBe('Accept, Origin');
  });

  it('adds nothing for a request from the router\'s own host or without an Origin', async () => {
    for (const headers of [{ origin: 'http://router.test', host: 'router.test' }, {}] as Record<string, string>[]) {
      const response = await yoga.fetch('http://router.test/graphql?query={ok}', { headers });
      expect(accessControl(response)).toEqual([]);
      expect(response.headers.get('vary')).toBe('Accept, Origin');
    }
  });
});
