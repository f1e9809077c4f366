// loadConfig(): flags over environment over defaults, validated once, every problem reported at once, then frozen.
import { configSchema, type Config, type ConfigInput } from './schema.js';
import { configFromEnv, ENV_NAMES } from './env.js';

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/**
 * Builds the frozen configuration. `overrides` are command-line flags (undefined entries are ignored);
 * `env` defaults to the process environment. Throws ConfigError naming each wrong setting by its
 * flag and environment variable.
 */
export function loadConfig(overrides: Partial<Record<keyof ConfigInput, unknown>> = {}, env?: NodeJS.ProcessEnv): Config {
  const merged: Record<string, unknown> = { ...configFromEnv(env) };
  for (const [key, value] of Object.entries(overrides)) if (value !== undefined) merged[key] = value;
  const result = configSchema.safeParse(merged);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '');
      if (issue.code === 'unrecognized_keys') return `unknown setting(s): ${issue.keys.join(', ')}`;
      const envName = (ENV_NAMES as Record<string, string>)[key];
      const where = envName ? `${key} (${envName})` : key;
      const value = merged[key];
      const shown = key === 'databaseUrl' || key === 'tokenExchangeClientSecret' || key === 'jwtPublicKey' ? '' : ` (got ${JSON.stringify(value)})`;
      return `${where}: ${issue.message}${value === undefined ? '' : shown}`;
    });
    throw new ConfigError(problems);
  }
  const parsed = result.data;
  const production = parsed.nodeEnv === 'production';
  return Object.freeze({ ...parsed, graphiql: parsed.graphiql ?? !production, dashboard: parsed.dashboard ?? !production, devIssuer: parsed.devIssuer ?? !production, trustedDocuments: parsed.trustedDocuments ?? (production ? 'allow' : 'off') });
}
