// Unit tests of configuration loading: defaults, precedence, validation messages.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './load-config.js';

describe('loadConfig', () => {
  it('fills defaults: embedded database in .switchyard, port 4000, GraphiQL in development', () => {
    const config = loadConfig({}, {});
    expect(config).toMatchObject({ port: 4000, host: '127.0.0.1', dataDir: '.switchyard', nodeEnv: 'development', graphiql: true });
    expect(config.databaseUrl).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads the environment, and flags win over it', () => {
    const env = { PORT: '5000', DATABASE_URL: 'postgres://u@h/db', SWITCHYARD_DATA_DIR: '/tmp/x' };
    expect(loadConfig({}, env)).toMatchObject({ port: 5000, databaseUrl: 'postgres://u@h/db', dataDir: '/tmp/x' });
    expect(loadConfig({ port: 6000 }, env).port).toBe(6000);
    expect(loadConfig({ port: undefined }, env).port).toBe(5000);
  });

  it('turns GraphiQL off in production unless asked for', () => {
    expect(loadConfig({}, { NODE_ENV: 'production' }).graphiql).toBe(false);
    expect(loadConfig({}, { NODE_ENV: 'production', SWITCHYARD_GRAPHIQL: 'true' }).graphiql).toBe(true);
  });

  it('serves the ops dashboard outside production, and in production only when asked for', () => {
    expect(loadConfig({}, {}).dashboard).toBe(true);
    expect(loadConfig({}, { SWITCHYARD_DASHBOARD: 'false' }).dashboard).toBe(false);
    expect(loadConfig({}, { NODE_ENV: 'production' }).dashboard).toBe(false);
    expect(loadConfig({}, { NODE_ENV: 'production', SWITCHYARD_DASHBOARD: '1' }).dashboard).toBe(true);
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

  it('rejects unknown settings passed by code', () => {
    expect(() => loadConfig({ prot: 1 } as never, {})).toThrow(/unknown setting\(s\): prot/);
  });
});
