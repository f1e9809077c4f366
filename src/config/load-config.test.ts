// Unit tests of configuration loading: defaults, precedence, validation messages.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './load-config.js';
import { configDefaults } from './schema.js';

describe('loadConfig', () => {
  it('fills defaults: embedded database in .switchyard, port 4000, GraphiQL in development', () => {
    const config = loadConfig({}, {});
    expect(config).toMatchObject({ port: 4000, host: '127.0.0.1', dataDir: '.switchyard', nodeEnv: 'development', graphiql: true });
    expect(config.databaseUrl).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('gives the modules that take a setting as an option the defaults a router started without settings has', () => {
    const config = loadConfig({}, {});
    for (const [key, value] of Object.entries(configDefaults)) expect(config[key as keyof typeof config], key).toEqual(value);
  });

  it('reads the environment, and flags win over it', () => {
    const env = { PORT: '5000', DATABASE_URL: 'postgres://u@h/db', SWITCHYARD_DATA_DIR: '/tmp/x' };
    expect(loadConfig({}, env)).toMatchObject({ port: 5000, databaseUrl: 'postgres://u@h/db', dataDir: '/tmp/x' });
    expect(loadConfig({ port: 6000 }, env).port).toBe(6000);
    expect(loadConfig({ port: undefined }, env).port).toBe(5000);
  });

  it('keeps audit rows and operations 30 days and records 1,000 new documents per client per hour unless told otherwise', () => {
    expect(loadConfig({}, {})).toMatchObject({ auditRetentionDays: 30, operationRetentionDays: 30, operationDiscoveryLimitPerHour: 1_000, operationDiscoveryTotalLimitPerHour: 10_000 });
    const env = { SWITCHYARD_AUDIT_RETENTION_DAYS: '7', SWITCHYARD_OPERATION_RETENTION_DAYS: '90', SWITCHYARD_OPERATION_DISCOVERY_LIMIT: '50', SWITCHYARD_OPERATION_DISCOVERY_TOTAL_LIMIT: '500' };
    expect(loadConfig({}, env)).toMatchObject({ auditRetentionDays: 7, operationRetentionDays: 90, operationDiscoveryLimitPerHour: 50, operationDiscoveryTotalLimitPerHour: 500 });
    const problems = (() => {
      try {
        loadConfig({}, { SWITCHYARD_AUDIT_RETENTION_DAYS: '0', SWITCHYARD_OPERATION_DISCOVERY_LIMIT: 'many' });
      } catch (error) {
        return (error as ConfigError).problems;
      }
      return [];
    })();
    expect(problems).toEqual([
      expect.stringMatching(/^auditRetentionDays \(SWITCHYARD_AUDIT_RETENTION_DAYS\): .* \(got "0"\)$/),
      expect.stringMatching(/^operationDiscoveryLimitPerHour \(SWITCHYARD_OPERATION_DISCOVERY_LIMIT\): .* \(got "many"\)$/),
    ]);
  });

  it('turns GraphiQL off in production unless asked for', () => {
    // Production needs an identity provider unless authentication is off (see the conflicts below).
    expect(loadConfig({}, { NODE_ENV: 'production', SWITCHYARD_AUTH_MODE: 'off' }).graphiql).toBe(false);
    expect(loadConfig({}, { NODE_ENV: 'production', SWITCHYARD_AUTH_MODE: 'off', SWITCHYARD_GRAPHIQL: 'true' }).graphiql).toBe(true);
  });

  it('serves the ops dashboard outside production, and in production only when asked for', () => {
    expect(loadConfig({}, {}).dashboard).toBe(true);
    expect(loadConfig({}, { SWITCHYARD_DASHBOARD: 'false' }).dashboard).toBe(false);
    expect(loadConfig({}, { NODE_ENV: 'production', SWITCHYARD_AUTH_MODE: 'off' }).dashboard).toBe(false);
    expect(loadConfig({}, { NODE_ENV: 'production', SWITCHYARD_AUTH_MODE: 'off', SWITCHYARD_DASHBOARD: '1' }).dashboard).toBe(true);
  });

  it('runs one router process unless SWITCHYARD_WORKERS or --workers asks for more; auto is one per core', async () => {
    const { availableParallelism } = await import('node:os');
    const shared = { DATABASE_URL: 'postgres://u@h/db' };
    expect(loadConfig({}, {}).workers).toBe(1);
    expect(loadConfig({}, { ...shared, SWITCHYARD_WORKERS: '3' }).workers).toBe(3);
    expect(loadConfig({ workers: 'auto' }, shared).workers).toBe(availableParallelism());
    expect(loadConfig({ workers: 2 }, { SWITCHYARD_SUPERGRAPH_FILE: 'supergraph.graphql' }).workers).toBe(2);
    expect(() => loadConfig({}, { SWITCHYARD_WORKERS: '0' })).toThrow(/workers \(SWITCHYARD_WORKERS\): must be "auto" or an integer from 1 to 256 \(got "0"\)/);
    // The embedded database lives inside one process: several need a PostgreSQL they share, or a supergraph file.
    expect(() => loadConfig({ workers: 2 }, {})).toThrow(/cannot share the embedded database/);
    // Commands that only use the store ignore it.
    expect(loadConfig({}, { SWITCHYARD_WORKERS: '2' }, { purpose: 'store' }).workers).toBe(2);
  });

  it('keeps idle connections 65 s, above a load balancer’s 60 s, and refuses a headers timeout beyond the request timeout', () => {
    expect(loadConfig({}, {})).toMatchObject({ keepAliveTimeoutMs: 65_000, headersTimeoutMs: 66_000, requestTimeoutMs: 300_000 });
    const env = { SWITCHYARD_KEEP_ALIVE_TIMEOUT_MS: '620000', SWITCHYARD_HEADERS_TIMEOUT_MS: '30000', SWITCHYARD_REQUEST_TIMEOUT_MS: '120000' };
    expect(loadConfig({}, env)).toMatchObject({ keepAliveTimeoutMs: 620_000, headersTimeoutMs: 30_000, requestTimeoutMs: 120_000 });
    expect(() => loadConfig({}, { SWITCHYARD_KEEP_ALIVE_TIMEOUT_MS: '0' })).toThrow(/keepAliveTimeoutMs \(SWITCHYARD_KEEP_ALIVE_TIMEOUT_MS\): .* \(got "0"\)/);
    // Node's http.createServer throws for this pair; the configuration says so first, naming both.
    expect(() => loadConfig({}, { SWITCHYARD_HEADERS_TIMEOUT_MS: '400000' })).toThrow(
      /headersTimeoutMs \(SWITCHYARD_HEADERS_TIMEOUT_MS\): 400000 ms is longer than requestTimeoutMs \(SWITCHYARD_REQUEST_TIMEOUT_MS\), 300000 ms/,
    );
  });

  it('reads REDIS_URL (rate limits shared by the routers), refuses another scheme without echoing its password', () => {
    expect(loadConfig({}, {}).redisUrl).toBeUndefined();
    expect(loadConfig({}, { REDIS_URL: 'redis://:pw@cache:6379/0' }).redisUrl).toBe('redis://:pw@cache:6379/0');
    expect(loadConfig({}, { REDIS_URL: 'rediss://cache:6380' }).redisUrl).toBe('rediss://cache:6380');
    expect(() => loadConfig({}, { REDIS_URL: 'http://:hunter2@cache:6379' })).toThrow(/redisUrl \(REDIS_URL\): must be a redis:\/\/ or rediss:\/\/ URL$/m);
    expect(() => loadConfig({}, { REDIS_URL: 'http://:hunter2@cache:6379' })).not.toThrow(/hunter2/);
  });

  it('reports every wrong setting at once, by name and variable, without echoing secrets', () => {
    let error: ConfigError | undefined;
    try {
      loadConfig({}, { PORT: '70000', DATABASE_URL: 'mysql://root:secret@h/db', LOG_LEVEL: 'loud' });
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems).toHaveLength(3);
    expect(error!.message).toMatch(/port \(PORT\)/);
    expect(error!.message).toMatch(/databaseUrl \(DATABASE_URL\): must be a postgres/);
    expect(error!.message).toMatch(/logLevel \(LOG_LEVEL\)/);
    expect(error!.message).not.toContain('secret');
  });

  it('accepts true/false, 1/0, on/off, yes/no (any case) for every switch, and names the words otherwise', () => {
    for (const [word, value] of [['true', true], ['FALSE', false], ['1', true], ['0', false], ['on', true], ['Off', false], ['yes', true], ['no', false]] as const) {
      expect(loadConfig({}, { SWITCHYARD_AUDIT: word, SWITCHYARD_RESILIENCE: word }), word).toMatchObject({ audit: value, resilience: value });
    }
    expect(() => loadConfig({}, { SWITCHYARD_QUERY_PLANS: 'enabled' })).toThrow(/queryPlans \(SWITCHYARD_QUERY_PLANS\): must be true\/false, 1\/0, on\/off or yes\/no \(got "enabled"\)/);
  });

  describe('settings that conflict are reported in the same message, naming what to set', () => {
    const problemsOf = (env: NodeJS.ProcessEnv, options?: Parameters<typeof loadConfig>[2]) => {
      try {
        loadConfig({}, env, options);
        return [];
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).message).toMatch(/^Invalid configuration:/);
        return [...(error as ConfigError).problems];
      }
    };

    it('production with authentication on and no identity provider', () => {
      expect(problemsOf({ NODE_ENV: 'production' })).toEqual([expect.stringMatching(/^authMode \(SWITCHYARD_AUTH_MODE\): "optional" needs keys .* set JWKS_URL or JWT_PUBLIC_KEY, or SWITCHYARD_AUTH_MODE=off$/)]);
      expect(problemsOf({ NODE_ENV: 'production', SWITCHYARD_AUTH_MODE: 'off' })).toEqual([]);
      expect(problemsOf({ NODE_ENV: 'production', JWKS_URL: 'https://idp.example/jwks.json' })).toEqual([]);
      expect(problemsOf({ NODE_ENV: 'production', SWITCHYARD_DEV_ISSUER: 'on' })).toEqual([]);
      expect(problemsOf({ SWITCHYARD_DEV_ISSUER: 'off' })).toEqual([expect.stringMatching(/development issuer is switched off/)]);
      // Commands that only use the store never verify a token.
      expect(problemsOf({ NODE_ENV: 'production' }, { purpose: 'store' })).toEqual([]);
    });

    it('two key sources, an unreadable key, a JWKS URL that is not http(s), token-exchange credentials without their endpoint', () => {
      expect(problemsOf({ JWKS_URL: 'https://idp.example/jwks.json', JWT_PUBLIC_KEY: 'x' })).toEqual([expect.stringMatching(/both are set/), expect.stringMatching(/jwtPublicKey \(JWT_PUBLIC_KEY\): not a readable public key/)]);
      expect(problemsOf({ JWKS_URL: 'ftp://idp.example/jwks.json' })).toEqual([expect.stringMatching(/jwksUrl \(JWKS_URL\): must be an http/)]);
      expect(problemsOf({ TOKEN_EXCHANGE_CLIENT_SECRET: 's3cret' }).join('\n')).toMatch(/set without TOKEN_EXCHANGE_URL/);
      expect(problemsOf({ TOKEN_EXCHANGE_CLIENT_SECRET: 's3cret' }).join('\n')).not.toContain('s3cret');
    });
  });

  it('rejects unknown settings passed by code', () => {
    expect(() => loadConfig({ prot: 1 } as never, {})).toThrow(/unknown setting\(s\): prot/);
  });
});
