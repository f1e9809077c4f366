// `--before REF`: Switchyard built from an older commit into bench/results/before/<sha>/, kept there for the next run.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { PACKAGE_ROOT } from '../../src/config/paths.js';
import { UsageError } from '../lib/args.js';
import { promoteProcessTree } from '../lib/processes.js';
import type { OlderBuild } from '../lib/types.js';

/** One folder per commit (bench/results/ is git-ignored, and left out of the lint and of the bench's and tests' type checks). */
export const BEFORE_DIR = path.join(PACKAGE_ROOT, 'bench', 'results', 'before');

/** Written last, after a successful build: what was built and with which node_modules, so a later run can reuse it. */
const MARKER_FILE = '.switchyard-bench-build.json';

/** `npm ci` on a cold cache fetches a few hundred packages: minutes, not seconds; the build takes about 15 s. */
const STEP_TIMEOUT_MS = 10 * 60_000;

/** Niceness of a build that runs while other scenarios measure, as the peers' install (peer-install.ts). */
const BACKGROUND_NICENESS = 19;

interface Marker {
  sha: string;
  /** sha256 of the older tree's package-lock.json. */
  lock: string;
  /** `linked`: its lock is byte-identical to this checkout's, so its node_modules is a link to ours; `installed`: its own `npm ci`. */
  nodeModules: 'linked' | 'installed';
  /** Node.js major of its own install (native builds differ between majors). */
  node: string;
}

/**
 * The full sha of `ref` in this checkout's repository (`git rev-parse --verify REF^{commit}`); a UsageError
 * (exit 2, before anything starts) when it names no commit or git cannot run here.
 */
export function resolveRevision(ref: string): string {
  const result = spawnSync('git', ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { cwd: PACKAGE_ROOT, encoding: 'utf8' });
  if (result.error) throw new UsageError(`--before ${ref}: cannot run git in ${PACKAGE_ROOT} (${result.error.message})`);
  if (result.status !== 0) {
    const why = result.stderr.trim();
    throw new UsageError(`--before ${ref}: no commit of this repository goes by that name (git rev-parse --verify '${ref}^{commit}' failed${why ? `: ${why}` : ''})`);
  }
  return result.stdout.trim();
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

function readLock(root: string): Buffer | undefined {
  try {
    return readFileSync(path.join(root, 'package-lock.json'));
  } catch {
    return undefined;
  }
}

/** A failed step of the build: what was run and its last lines of output. */
class BuildError extends Error {}

/**
 * Switchyard as it was at `sha`, built once and then reused:
 * 1. reused as it is when its marker says it was built from `sha` with the lock it holds and, when its
 *    node_modules is a link to this checkout's, this checkout's lock is still that same file;
 * 2. otherwise the folder is emptied and the commit's files exported into it with `git archive`, not
 *    `git worktree add`: an export leaves nothing in the repository's .git (no worktree entry to prune when
 *    the folder is deleted by hand, no checkout of a branch held), and only tracked files come out;
 * 3. node_modules: a link to this checkout's when both package-lock.json files are byte-identical (the usual
 *    case for a recent REF: no install at all), else its own `npm ci`;
 * 4. built with its own `npm run build` (today `tsc -p tsconfig.json`: dist/ for bin/switchyard.js), so a
 *    commit whose build differed builds as it did then; then the marker is written.
 * prepare() runs all this in the background (niceness 19, on the bench's own core, the load core) while
 * earlier scenarios measure; the first ready() promotes it to normal priority on every core.
 */
export class BeforeBuild implements OlderBuild {
  readonly ref: string;
  readonly sha: string;
  readonly root: string;
  #done: Promise<void> | undefined;
  #background = false;
  /** The step running now, if any: what promotion applies to. */
  #step: ChildProcess | undefined;

  constructor(ref: string, sha: string) {
    this.ref = ref;
    this.sha = sha;
    this.root = path.join(BEFORE_DIR, sha);
  }

  /** bench/results/before/<sha>, relative to the checkout: for progress lines. */
  get folder(): string {
    return path.relative(PACKAGE_ROOT, this.root);
  }

  get short(): string {
    return this.sha.slice(0, 7);
  }

  /** Whether an earlier run left a build of this commit that can be used as it is. */
  reusable(): boolean {
    let marker: Marker;
    try {
      marker = JSON.parse(readFileSync(path.join(this.root, MARKER_FILE), 'utf8')) as Marker;
    } catch {
      return false;
    }
    const lock = readLock(this.root);
    if (marker.sha !== this.sha || !lock || marker.lock !== sha256(lock)) return false;
    if (!existsSync(path.join(this.root, 'bin', 'switchyard.js')) || !existsSync(path.join(this.root, 'dist'))) return false;
    if (marker.nodeModules === 'linked') return marker.lock === sha256(readLock(PACKAGE_ROOT) ?? '');
    return marker.node === process.versions.node.split('.')[0];
  }

  prepare(log: (line: string) => void): void {
    this.#start(log, true);
  }

  ready(log: (line: string) => void): Promise<void> {
    const done = this.#start(log, false);
    if (this.#background) {
      this.#background = false;
      log(`  waiting for the build of ${this.short} (promoted to normal priority, all cores)`);
      if (this.#step?.pid !== undefined && this.#step.exitCode === null) promoteProcessTree(this.#step.pid);
    }
    return done;
  }

  #start(log: (line: string) => void, background: boolean): Promise<void> {
    if (!this.#done) {
      if (this.reusable()) {
        log(`  --before ${this.ref}: reusing the build of ${this.short} in ${this.folder}`);
        this.#done = Promise.resolve();
      } else {
        this.#background = background;
        // Finished (or failed) before anyone waited: there is nothing left to promote.
        this.#done = this.#build(log).finally(() => (this.#background = false));
        // Nobody may be waiting yet: keep an early failure from being an unhandled rejection.
        this.#done.catch(() => undefined);
      }
    }
    return this.#done;
  }

  async #build(log: (line: string) => void): Promise<void> {
    const startedAt = performance.now();
    log(`  --before ${this.ref}: building ${this.short} into ${this.folder}${this.#background ? ' in the background (niceness 19, load core) while the other scenarios run' : ''}`);
    try {
      this.#empty();
      mkdirSync(this.root, { recursive: true });
      const archive = path.join(BEFORE_DIR, `${this.sha}.tar`);
      await this.#run('git archive', 'git', ['archive', '--format=tar', `--output=${archive}`, this.sha], PACKAGE_ROOT);
      await this.#run('tar', 'tar', ['-x', '-f', archive, '-C', this.root], this.root);
      rmSync(archive, { force: true });

      const lock = readLock(this.root);
      if (!lock) throw new BuildError(`${this.short} has no package-lock.json`);
      const linked = lock.equals(readLock(PACKAGE_ROOT) ?? Buffer.alloc(0)) && existsSync(path.join(PACKAGE_ROOT, 'node_modules'));
      if (linked) {
        // Relative, so that the link still holds if the checkout moves.
        symlinkSync(path.relative(this.root, path.join(PACKAGE_ROOT, 'node_modules')), path.join(this.root, 'node_modules'), 'dir');
      } else {
        log(`  ${this.short}: its package-lock.json differs from this checkout's: npm ci (a minute or more)`);
        await this.#run('npm ci', ...npm(['ci', '--no-audit', '--no-fund', '--loglevel=error']), this.root);
      }
      await this.#run('npm run build', ...npm(['run', 'build', '--silent']), this.root);
      if (!existsSync(path.join(this.root, 'bin', 'switchyard.js'))) throw new BuildError(`${this.short} has no bin/switchyard.js: too old for the bench`);

      const marker: Marker = { sha: this.sha, lock: sha256(lock), nodeModules: linked ? 'linked' : 'installed', node: process.versions.node.split('.')[0]! };
      writeFileSync(path.join(this.root, MARKER_FILE), `${JSON.stringify(marker, null, 2)}\n`);
      log(`  --before ${this.ref}: ${this.short} built in ${((performance.now() - startedAt) / 1000).toFixed(0)} s (node_modules ${linked ? 'linked to this checkout\'s: same lock' : 'installed: another lock'})`);
    } catch (error) {
      throw new Error(`building ${this.short} (--before ${this.ref}) in ${this.folder} failed: ${(error as Error).message}`);
    }
  }

  /** Removes what a failed or outdated build left, a linked node_modules as a link (never what it points to). */
  #empty(): void {
    const nodeModules = path.join(this.root, 'node_modules');
    try {
      if (lstatSync(nodeModules).isSymbolicLink()) unlinkSync(nodeModules);
    } catch {
      // No node_modules there.
    }
    rmSync(this.root, { recursive: true, force: true });
  }

  /** Runs one step (at niceness 19 while in the background); rejects with its last 15 lines of output when it fails. */
  #run(step: string, command: string, args: readonly string[], cwd: string): Promise<void> {
    const [file, ...rest] = this.#background ? ['nice', '-n', String(BACKGROUND_NICENESS), command, ...args] : [command, ...args];
    const child = spawn(file!, rest, { cwd, env: outsideNpmRun(), stdio: ['ignore', 'pipe', 'pipe'] });
    this.#step = child;
    // The bench pins itself, so its children, to the load core: a step nobody measures may use every core once waited for.
    if (!this.#background && child.pid !== undefined) promoteProcessTree(child.pid);
    const output: string[] = [];
    const keep = (chunk: Buffer) => {
      output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      output.splice(0, Math.max(0, output.length - 15));
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    // The bench exiting (Ctrl-C, an error) must not leave a step writing into the folder.
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), STEP_TIMEOUT_MS);
      const settle = (error?: Error) => {
        clearTimeout(timer);
        process.off('exit', killOnExit);
        this.#step = undefined;
        if (error) reject(error);
        else resolve();
      };
      const failure = (why: string) => new BuildError(`${step} ${why}${output.length ? `:\n    ${output.join('\n    ')}` : ''}`);
      child.once('error', (error) => settle(failure(`could not start (${error.message})`)));
      child.once('exit', (code, signal) => {
        if (code === 0) settle();
        else settle(failure(signal ? `was stopped (${signal}; the limit is ${STEP_TIMEOUT_MS / 60_000} minutes)` : `failed (exit code ${code})`));
      });
    });
  }
}

/** `npm run bench` tells its children which npm runs it; otherwise the one on PATH. */
function npm(args: readonly string[]): [string, string[]] {
  const cli = process.env.npm_execpath;
  return cli && cli.endsWith('.js') ? [process.execPath, [cli, ...args]] : ['npm', [...args]];
}

/**
 * The environment without what `npm run bench` sets about this checkout (npm_config_local_prefix,
 * npm_package_*, npm_lifecycle_*, INIT_CWD): the older tree's npm must find its own package, from its folder.
 */
function outsideNpmRun(): NodeJS.ProcessEnv {
  const ours = /^(npm_config_local_prefix|npm_package_.*|npm_lifecycle_.*|npm_command|INIT_CWD)$/;
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !ours.test(name)));
}
