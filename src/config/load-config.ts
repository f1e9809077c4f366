// loadConfig(): flags over environment over defaults, validated once, every problem reported at once, then frozen.
import { createPublicKey } from 'node:crypto';
import { availableParallelism } from 'node:os';
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

export interface LoadConfigOptions {
  /**
   * `router` (default): the settings must also work together to serve (an identity provider when
   * authentication is on, one key source...). `store`: a command that only reads or writes the
   * metadata store (`policy set`, `migrate`...), which never verifies a user token.
   */
  purpose?: 'router' | 'store';
}

/**
 * Builds the frozen configuration. `overrides` are command-line flags (undefined entries are ignored);
 * `env` defaults to the process environment. Throws ConfigError naming each wrong setting by its
 * flag and environment variable, and, for a router, each pair of settings that conflict.
 */
export function loadConfig(overrides: Partial<Record<keyof ConfigInput, unknown>> = {}, env?: NodeJS.ProcessEnv, options: LoadConfigOptions = {}): Config {
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
      const shown = key === 'databaseUrl' || key === 'redisUrl' || key === 'tokenExchangeClientSecret' || key === 'jwtPublicKey' ? '' : ` (got ${JSON.stringify(value)})`;
      return `${where}: ${issue.message}${value === undefined ? '' : shown}`;
    });
    throw new ConfigError(problems);
  }
  const parsed = result.data;
  const production = parsed.nodeEnv === 'production';
  const config: Config = {
    ...parsed,
    graphiql: parsed.graphiql ?? !production, dashboard: parsed.dashboard ?? !production, devIssuer: parsed.devIssuer ?? !production, trustedDocuments: parsed.trustedDocuments ?? (production ? 'allow' : 'off'),
    workers: parsed.workers === 'auto' ? availableParallelism() : parsed.workers,
    // Production: no cross-origin access until ops allow an origin; elsewhere any origin (decision 037).
    corsOrigins: parsed.corsOrigins ?? (production ? [] : ['*']),
  };
  const conflicts = (options.purpose ?? 'router') === 'router' ? configConflicts(config) : [];
  if (conflicts.length > 0) throw new ConfigError(conflicts);
  return Object.freeze(config);
}

const where = (key: keyof typeof ENV_NAMES) => `${key} (${ENV_NAMES[key]})`;

/**
 * Settings that are each valid but cannot work together, found here rather than when a service
 * built from them throws at start (an AuthConfigError stack trace, say). Each message names what to
 * set. Values of secrets are never shown.
 */
function configConflicts(config: Config): string[] {
  const problems: string[] = [];
  if (config.authMode !== 'off') {
    if (config.jwksUrl && config.jwtPublicKey) {
      problems.push(`${where('jwksUrl')} and ${where('jwtPublicKey')}: both are set; user tokens are verified with one key source, so set only one`);
    }
    if (!config.jwksUrl && !config.jwtPublicKey && !config.devIssuer) {
      const why = config.nodeEnv === 'production' ? 'production has no development issuer' : 'the development issuer is switched off (SWITCHYARD_DEV_ISSUER)';
      problems.push(
        `${where('authMode')}: "${config.authMode}" needs keys to verify user tokens, and none are configured (${why}): set ${ENV_NAMES.jwksUrl} or ${ENV_NAMES.jwtPublicKey}, or ${ENV_NAMES.authMode}=off`,
      );
    }
    if (config.jwtPublicKey && !readablePublicKey(config.jwtPublicKey)) {
      problems.push(`${where('jwtPublicKey')}: not a readable public key; give a PEM public key (SPKI) or an X.509 certificate`);
    }
  }
  if (config.workers > 1 && !config.databaseUrl && !config.supergraphFile) {
    problems.push(
      `${where('workers')}: ${config.workers} router processes cannot share the embedded database (it lives inside one process): set ${ENV_NAMES.databaseUrl} (--database-url) to a PostgreSQL they share, serve a supergraph file with --supergraph, or run one worker`,
    );
  }
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    // Node's http.createServer throws ERR_OUT_OF_RANGE for this pair: said here, with the names to set.
    problems.push(`${where('headersTimeoutMs')}: ${config.headersTimeoutMs} ms is longer than ${where('requestTimeoutMs')}, ${config.requestTimeoutMs} ms, which includes the headers: lower the first or raise the second`);
  }
  if (config.tokenExchangeUrl && !config.subgraphTokens) {
    problems.push(`${where('tokenExchangeUrl')}: set, but ${where('subgraphTokens')} is off, so no token would ever be exchanged: unset one of them`);
  }
  if (!config.tokenExchangeUrl && (config.tokenExchangeClientId || config.tokenExchangeClientSecret)) {
    problems.push(`${where('tokenExchangeClientId')} / ${ENV_NAMES.tokenExchangeClientSecret}: set without ${ENV_NAMES.tokenExchangeUrl}, which they authenticate to: set ${ENV_NAMES.tokenExchangeUrl} or unset them`);
  }
  if (config.tokenExchangeClientSecret && !config.tokenExchangeClientId) {
    problems.push(`${where('tokenExchangeClientSecret')}: set without ${ENV_NAMES.tokenExchangeClientId}: set both (HTTP Basic client authentication, RFC 6749 §2.3.1) or neither`);
  }
  return problems;
}

function readablePublicKey(pem: string): boolean {
  try {
    createPublicKey(pem);
    return true;
  } catch {
    return false;
  }
}
