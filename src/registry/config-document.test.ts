// Unit tests of the configuration file: the YAML it reads and writes, and every problem of an invalid one listed at once.
import { describe, expect, it } from 'vitest';
import { formatPath, InvalidConfigFileError, readConfigYaml, writeConfigYaml, type ConfigDocument } from './config-document.js';

function problemsOf(text: string): string[] {
  try {
    readConfigYaml(text);
  } catch (error) {
    if (error instanceof InvalidConfigFileError) return error.message.split('\n').slice(1).map((line) => line.trim());
    throw error;
  }
  throw new Error('the file was accepted');
}

const FULL: ConfigDocument = {
  version: 1,
  subgraphs: { product: { url: 'http://127.0.0.1:4001/graphql', route: { timeoutMs: 500, breaker: { failureRatio: 0.5 }, headers: { drop: ['authorization'] } } }, reviews: { url: 'https://reviews.internal/graphql' } },
  policies: { '*': { costLimit: 50_000 }, ProductPage: { maxConcurrency: 10, queueLength: 0 }, Quiet: {} },
  permissions: { 'Review.body': ['role:admin', 'scope:reviews:read'], 'operation:AdminPage': ['role:admin'] },
  cacheRules: { Product: { maxAgeSeconds: 60, scope: 'public' }, 'Product.price': { maxAgeSeconds: 0, staleSeconds: 30 } },
  trustedDocuments: [{ client: 'web', version: '1.2', documents: ['a1', 'b2'] }, { client: 'web', version: '', documents: ['c3'] }],
};

describe('configuration file', () => {
  it('reads back what it writes', () => {
    const yaml = writeConfigYaml(FULL);
    const read = readConfigYaml(yaml);
    // Lists come back sorted (manifests by client, then version).
    expect(read).toEqual({ ...FULL, trustedDocuments: [FULL.trustedDocuments![1], FULL.trustedDocuments![0]] });
    // Written again, the same text (route keys come back in the route schema's order).
    expect(writeConfigYaml(readConfigYaml(writeConfigYaml(read)))).toBe(writeConfigYaml(read));
  });

  it('writes a header, the version first, and quotes what YAML would read otherwise', () => {
    const yaml = writeConfigYaml(FULL);
    expect(yaml).toMatch(/^# Switchyard configuration/);
    expect(yaml.split('\n').find((line) => !line.startsWith('#'))).toBe('version: 1');
    expect(yaml).toContain('  "*":\n    costLimit: 50000');
    // A version that looks like a number stays text.
    expect(yaml).toContain('version: "1.2"');
  });

  it('treats a key set to null as left out, and sorts principals and ids', () => {
    const read = readConfigYaml(`version: 1
policies:
  Page: { costLimit: 5, maxConcurrency: null }
permissions:
  Review.body: [scope:b, role:a]
cacheRules:
  Product: { maxAgeSeconds: 5, scope: null }
subgraphs:
  product: { url: "http://x/graphql", route: null }
trustedDocuments:
  - { client: web, documents: [z, a] }
`);
    expect(read).toEqual({
      version: 1,
      policies: { Page: { costLimit: 5 } },
      permissions: { 'Review.body': ['role:a', 'scope:b'] },
      cacheRules: { Product: { maxAgeSeconds: 5 } },
      subgraphs: { product: { url: 'http://x/graphql' } },
      trustedDocuments: [{ client: 'web', version: '', documents: ['a', 'z'] }],
    });
  });

  it('holds only the sections it names', () => {
    expect(readConfigYaml('version: 1\npolicies: {}\n')).toEqual({ version: 1, policies: {} });
  });

  it('lists every problem at once, each with its line and path, in the order of the file', () => {
    const problems = problemsOf(`version: 2
subgraphs:
  product:
    url: ftp://x
    route: { timeoutMs: -1, bogus: 1 }
  9bad: { url: "http://x" }
policies:
  "*": { costLimit: 0 }
  bad-name: { costLimit: "x", foo: 1 }
permissions:
  Review.body: [scope:a, scope:a, nope]
  bad: [anonymous]
cacheRules:
  Product: { maxAgeSeconds: -1, scope: shared }
  Product.price: { staleSeconds: 3 }
trustedDocuments:
  - { client: web, version: 1.2, documents: [a, a, ""] }
  - { client: "", documents: [b] }
extra: true
`);
    expect(problems).toEqual([
      "line 1, version: give the file format's version: version: 1",
      'line 4, subgraphs.product.url: subgraph URL must be http or https: ftp://x',
      'line 5, subgraphs.product.route.timeoutMs: Too small: expected number to be >0',
      'line 5, subgraphs.product.route.bogus: Unrecognized key: "bogus"',
      'line 6, subgraphs."9bad": invalid subgraph name "9bad": use letters, digits, - and _, starting with a letter',
      'line 8, policies."*".costLimit: costLimit must be an integer >= 1 (got 0)',
      'line 9, policies."bad-name": invalid operation name "bad-name": use a GraphQL name or * for the default',
      'line 9, policies."bad-name".costLimit: costLimit must be an integer >= 1 (got "x")',
      'line 9, policies."bad-name".foo: Unrecognized key: "foo"',
      'line 11, permissions."Review.body"[2]: invalid principal "nope": use sub:ID, scope:NAME, client:ID, role:NAME, authenticated or anonymous',
      'line 11, permissions."Review.body"[1]: scope:a is listed twice',
      'line 12, permissions.bad: invalid coordinate "bad": use Type.field, operation:Name or introspection',
      'line 14, cacheRules.Product.maxAgeSeconds: max age must be a whole number of seconds, 0 or more (got -1)',
      'line 14, cacheRules.Product.scope: unknown scope "shared": use public (shared by everyone) or private (per principal)',
      'line 15, cacheRules."Product.price".maxAgeSeconds: max age must be a whole number of seconds, 0 or more (got undefined)',
      'line 17, trustedDocuments[0].version: the client version is text: quote it, e.g. version: "1.2.0"',
      'line 17, trustedDocuments[0].documents[2]: invalid document id ""',
      'line 17, trustedDocuments[0].documents[1]: document a is named twice (an id belongs to one manifest)',
      'line 18, trustedDocuments[1].client: name the client the manifest was published for',
      'line 19, extra: Unrecognized key: "extra"',
    ]);
  });

  it('takes the introspection rule in permissions, and refuses its near misses by name', () => {
    expect(readConfigYaml('version: 1\npermissions:\n  introspection: [role:developer, scope:schema:read]\n')).toEqual({ version: 1, permissions: { introspection: ['role:developer', 'scope:schema:read'] } });
    expect(problemsOf('version: 1\npermissions:\n  Introspection: [role:developer]\n  Query.__schema: [role:developer]\n')).toEqual([
      'line 3, permissions.Introspection: invalid coordinate "Introspection": did you mean introspection (lower case, nothing around it)?',
      'line 4, permissions."Query.__schema": invalid coordinate "Query.__schema": introspection fields take no rule of their own; use introspection (who may introspect in production)',
    ]);
  });

  it('refuses what is not one YAML document, with the lines', () => {
    expect(problemsOf('version: 1\npolicies: {}\npolicies: {}\n')).toEqual(['line 3: not YAML: Map keys must be unique']);
    expect(problemsOf('version: 1\n---\nversion: 1\n')).toEqual(['line 2: the file holds more than one YAML document: a configuration is one']);
    expect(problemsOf('')).toEqual(['Invalid input: expected object, received null']);
  });

  it('quotes path segments that are not plain names', () => {
    expect(formatPath(['permissions', 'Review.body', 1])).toBe('permissions."Review.body"[1]');
    expect(formatPath(['policies', '*', 'costLimit'])).toBe('policies."*".costLimit');
  });
});
