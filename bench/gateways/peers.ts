// The peer gateways Switchyard is compared with, as variants: Hive Gateway (JavaScript and Rust query planner) and Apollo Gateway.
import path from 'node:path';
import { freePort } from '../lib/free-port.js';
import type { RunningBackend, RunningGateway, StartContext, Variant } from '../lib/types.js';
import { ensurePeersInstalled, PEERS_DIR } from './peer-install.js';

/**
 * What every peer runs with, as Switchyard does (bench/gateways/switchyard.ts): NODE_ENV=production, what a
 * measured deployment runs. Nothing else is set: each peer runs with its own defaults.
 */
const PEER_ENV: Readonly<Record<string, string>> = { NODE_ENV: 'production' };

/** The Hive Gateway CLI's entry, started with node itself so that the pinned process is the gateway (no shell shim in between). */
const HIVE_GATEWAY_BIN = path.join(PEERS_DIR, 'node_modules', '@graphql-hive', 'gateway', 'dist', 'bin.js');
/** Our few lines that put Apollo Gateway in Apollo Server's standalone HTTP server (bench/peers/apollo-gateway.mjs). */
const APOLLO_GATEWAY_SERVER = path.join(PEERS_DIR, 'apollo-gateway.mjs');

/** A peer gateway that starts slowly on a cold machine (module loading, the first plan) still gets there within this. */
const PEER_READY_TIMEOUT_MS = 60_000;

/** Every peer shares one install (bench/peers/node_modules): the first variant to ask starts it, the others join it. */
function installInBackground(log: (line: string) => void): void {
  void ensurePeersInstalled(log, { background: true });
}

function profileArgs(context: StartContext, name: string): string[] {
  return context.profileDir ? ['--cpu-prof', '--cpu-prof-dir', context.profileDir, '--cpu-prof-name', `${context.instanceName ?? name}.cpuprofile`] : [];
}

interface HiveGatewayOptions {
  name: string;
  description: string;
  /** Flags after `hive-gateway supergraph FILE --host --port`. */
  args: readonly string[];
}

/**
 * `hive-gateway supergraph FILE --host 127.0.0.1 --port N [args]`, from the work folder (no gateway.config.*
 * there, so every setting is the CLI's default: one process, no fork). It cannot be told to take port 0 and
 * report it, so the bench picks a free port. Ready when it logs `Listening on http://…` (coloured: the URL
 * is read up to the escape code that follows it).
 */
function hiveGatewayVariant(options: HiveGatewayOptions): Variant {
  return {
    name: options.name,
    description: options.description,
    optional: true,
    prepare: installInBackground,
    async start(context: StartContext, backend: RunningBackend): Promise<RunningGateway> {
      await ensurePeersInstalled(context.log ?? console.log);
      const port = await freePort();
      const child = await context.supervisor.start({
        name: options.name,
        command: process.execPath,
        args: [...profileArgs(context, options.name), HIVE_GATEWAY_BIN, 'supergraph', backend.supergraphFile, '--host', '127.0.0.1', '--port', String(port), ...options.args],
        env: PEER_ENV,
        core: context.cores.gateway,
        cwd: context.workDir,
        ready: /Listening on (https?:\/\/[\w.:[\]-]+)/,
        readyTimeoutMs: PEER_READY_TIMEOUT_MS,
      });
      return { url: `${child.announced}/graphql`, process: child };
    },
  };
}

/** Hive Gateway with its defaults: the JavaScript query planner of @graphql-tools/federation (stitching, like Switchyard). */
export const hiveGateway = hiveGatewayVariant({
  name: 'hive-gateway',
  description: '@graphql-hive/gateway CLI, default settings',
  args: [],
});

/** Hive Gateway planning with the Rust query planner of Hive Router (@graphql-hive/router-runtime, a native module). */
export const hiveGatewayRouterRuntime = hiveGatewayVariant({
  name: 'hive-gateway-rust-qp',
  description: '@graphql-hive/gateway CLI with --hive-router-runtime (@graphql-hive/router-runtime: Rust query planner)',
  args: ['--hive-router-runtime'],
});

/** Apollo Gateway (@apollo/gateway) inside Apollo Server (@apollo/server), both at their defaults. */
export const apolloGateway: Variant = {
  name: 'apollo-gateway',
  description: '@apollo/gateway in @apollo/server (standalone), default settings',
  optional: true,
  prepare: installInBackground,
  async start(context: StartContext, backend: RunningBackend): Promise<RunningGateway> {
    await ensurePeersInstalled(context.log ?? console.log);
    const child = await context.supervisor.start({
      name: 'apollo-gateway',
      command: process.execPath,
      args: [...profileArgs(context, 'apollo-gateway'), APOLLO_GATEWAY_SERVER, backend.supergraphFile],
      env: PEER_ENV,
      core: context.cores.gateway,
      cwd: PEERS_DIR,
      ready: /^Apollo Gateway on (\S+)/,
      readyTimeoutMs: PEER_READY_TIMEOUT_MS,
    });
    return { url: child.announced, process: child };
  },
};
