// Re-exports of the configuration layer.
export * from './schema.js';
export * from './load-config.js';
export { ENV_NAMES, configFromEnv } from './env.js';
