// Runs one demo subgraph as its own process: PORT, HOST and router-token settings from the environment, stops on SIGTERM/SIGINT.
import { tokenRequirementFromEnv } from './token-gate.js';
import type { DemoSubgraph, RunningSubgraph } from './types.js';

/**
 * Listens on `PORT` (default the subgraph's own port) and `HOST` (default 127.0.0.1), then closes
 * the server on the first SIGTERM or SIGINT, after which the process ends on its own because nothing is left.
 * When `ROUTER_JWKS_URL` is set (plus optional `ROUTER_TOKEN_ISSUER`, default `switchyard`), `/graphql`
 * requires the router's tokens for this subgraph; otherwise the subgraph keeps what its factory set
 * (which reads the same variables from its own `env`). Bad values throw before listening.
 */
export async function runStandalone(subgraph: DemoSubgraph, env: NodeJS.ProcessEnv = process.env): Promise<RunningSubgraph> {
  const port = parsePort(env.PORT, subgraph.defaultPort);
  const host = env.HOST?.trim() || '127.0.0.1';
  const tokens = tokenRequirementFromEnv(env);
  if (tokens !== undefined) subgraph.requireTokens(tokens);
  const running = await subgraph.listen(port, host);
  const stop = function stopOnSignal(): void {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    running.close().catch((error: unknown) => {
      console.error(`${subgraph.name} subgraph: error while closing: ${String(error)}`);
      process.exitCode = 1;
    });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return running;
}

function parsePort(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be an integer from 0 to 65535 (got ${JSON.stringify(raw)})`);
  return port;
}

/** The line a standalone subgraph prints once listening: where, and whether it requires router tokens. */
export function describeRunning(subgraph: DemoSubgraph, running: RunningSubgraph): string {
  const tokens = subgraph.requiredTokens;
  const security = tokens === undefined ? 'router tokens not required' : `requiring router tokens (issuer ${tokens.issuer}, keys ${tokens.jwksUrl})`;
  return `${running.name} subgraph listening on ${running.url}, ${security}`;
}
