// Installs the peer gateways into bench/peers/node_modules on first use, or again when bench/peers/package.json or its lock changed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { PACKAGE_ROOT } from '../../src/config/paths.js';
import { promoteProcessTree } from '../lib/processes.js';

/** bench/peers: its own package.json and lock with pinned versions; its node_modules/ is git-ignored. */
export const PEERS_DIR = path.join(PACKAGE_ROOT, 'bench', 'peers');

/** Written after a successful install: the hash of what was installed, so a changed manifest installs again. */
const STAMP_FILE = path.join(PEERS_DIR, 'node_modules', '.switchyard-bench-install');

/** An install on a cold cache fetches about 960 packages (680 MB on disk): minutes, not seconds. */
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** Niceness of an install that runs while other scenarios measure: it gets only the CPU time nobody else wants. */
const BACKGROUND_NICENESS = 19;

function manifestHash(): string {
  const hash = createHash('sha256');
  for (const file of ['package.json', 'package-lock.json']) {
    const full = path.join(PEERS_DIR, file);
    hash.update(file).update('\0').update(existsSync(full) ? readFileSync(full) : '').update('\0');
  }
  // A different Node.js major may need other native builds (the Rust query planner ships per platform).
  return hash.update(process.versions.node.split('.')[0]).digest('hex');
}

/** Whether bench/peers/node_modules holds what bench/peers/package.json and its lock ask for. */
export function peersInstalled(): boolean {
  try {
    return readFileSync(STAMP_FILE, 'utf8').trim() === manifestHash();
  } catch {
    return false;
  }
}

interface Installation {
  done: Promise<void>;
  /** Gives a background install full priority and every core: something is now waiting for it. */
  promote(): void;
  /** Still running at low priority: nobody has waited for it yet. */
  background: boolean;
}

/** The install in progress or done, shared by every peer variant of the run: one install, one failure message. */
let installation: Installation | undefined;

/**
 * Resolves when bench/peers/node_modules matches bench/peers/package.json and its lock:
 * 1. nothing to do when the stamp file holds the hash of both manifests (every run after the first);
 * 2. otherwise `npm install` in bench/peers (the lock pins every version; npm's own registry settings apply),
 *    its output kept and shown only if it fails, then the stamp is written;
 * 3. `background: true` (the bench starts it so before the first scenario when a later one needs the peers):
 *    niceness 19 on the core the bench runs on (the load core), so the scenarios measured meanwhile lose
 *    next to nothing; the first peer variant that needs it promotes it to normal priority on every core.
 * Rejects with npm's last lines when the install fails or takes over 10 minutes; the peer variants are then
 * left out and the report says why. After a failure it rejects with the same error, without retrying.
 */
export function ensurePeersInstalled(log: (line: string) => void, options: { background?: boolean } = {}): Promise<void> {
  if (!installation) {
    if (peersInstalled()) {
      installation = { done: Promise.resolve(), promote: () => undefined, background: false };
    } else {
      installation = install(log, options.background ?? false);
      // Nobody may be waiting yet: keep an early failure from being an unhandled rejection.
      installation.done.catch(() => undefined);
    }
  }
  if (!options.background && installation.background) {
    log('  waiting for the peer gateways install (promoted to normal priority, all cores)');
    installation.promote();
    installation.background = false;
  }
  return installation.done;
}

function install(log: (line: string) => void, background: boolean): Installation {
  const wanted = manifestHash();
  log(
    background
      ? '  installing the peer gateways into bench/peers/node_modules in the background (npm install, niceness 19, load core) while the other scenarios run'
      : '  installing the peer gateways into bench/peers/node_modules (npm install; first run only, 2-4 minutes)',
  );
  const startedAt = performance.now();
  const npm = startNpmInstall(background ? BACKGROUND_NICENESS : 0);
  if (!background) allCores(npm.child);
  const installation: Installation = {
    done: npm.exited.then(() => {
      writeFileSync(STAMP_FILE, `${wanted}\n`);
      log(`  peer gateways installed in ${((performance.now() - startedAt) / 1000).toFixed(0)} s`);
    }),
    background,
    promote: () => {
      if (npm.child.exitCode !== null || npm.child.pid === undefined) return;
      promoteProcessTree(npm.child.pid);
    },
  };
  // Finished (or failed) before anyone waited: there is nothing left to promote.
  void installation.done.finally(() => (installation.background = false)).catch(() => undefined);
  return installation;
}

/** The bench pins itself (and so every child it spawns) to the load core; an install nobody measures may use them all. */
function allCores(child: ChildProcess): void {
  if (child.pid === undefined) return;
  spawnSync('taskset', ['-a', '-c', '-p', `0-${availableParallelism() - 1}`, String(child.pid)], { stdio: 'ignore' });
}

function startNpmInstall(niceness: number): { child: ChildProcess; exited: Promise<void> } {
  // `npm run bench` tells its children which npm runs it; otherwise the one on PATH.
  const npmCli = process.env.npm_execpath;
  const npm = npmCli && npmCli.endsWith('.js') ? [process.execPath, npmCli] : ['npm'];
  const command = [...npm, 'install', '--no-audit', '--no-fund', '--loglevel=error'];
  // `nice` execs npm at that niceness from its first instruction, so every thread npm starts inherits it.
  const [file, ...args] = niceness ? ['nice', '-n', String(niceness), ...command] : command;
  const child = spawn(file, args, { cwd: PEERS_DIR });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    output.splice(0, Math.max(0, output.length - 15));
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // The bench exiting (Ctrl-C, an error) must not leave npm writing into node_modules.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), INSTALL_TIMEOUT_MS);
    const settle = (error?: Error) => {
      clearTimeout(timer);
      process.off('exit', killOnExit);
      if (error) reject(error);
      else resolve();
    };
    const failure = (why: string) => new Error(`npm install in bench/peers ${why}${output.length ? `:\n    ${output.join('\n    ')}` : ''}`);
    child.once('error', (error) => settle(failure(`could not start (${error.message})`)));
    child.once('exit', (code, signal) => {
      if (code === 0) settle();
      else settle(failure(signal ? `was stopped (${signal}; the limit is ${INSTALL_TIMEOUT_MS / 60_000} minutes)` : `failed (exit code ${code})`));
    });
  });
  return { child, exited };
}
