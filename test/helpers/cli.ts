// Runs the built `switchyard` command (npm test builds it first) as a separate process, as users do.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin', 'switchyard.js');

function assertBuilt(): void {
  if (!existsSync(path.join(ROOT, 'dist', 'src', 'cli', 'main.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does it) before the CLI tests');
}

/** The environment a CLI process gets: the test's, minus the settings that would point it elsewhere. */
function cliEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of ['DATABASE_URL', 'SWITCHYARD_DATA_DIR', 'PORT', 'NODE_ENV', 'SWITCHYARD_SUPERGRAPH_FILE']) delete base[name];
  return { ...base, LOG_LEVEL: 'silent', ...env };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 30_000): Promise<CliResult> {
  assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`switchyard ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface CliProcess {
  child: ChildProcess;
  /** Everything printed so far. */
  output(): string;
  /** Resolves with the first match of `pattern` in the output (stdout or stderr). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts a long-running command (demo, serve) and lets the test wait for what it prints. */
export function startCli(args: string[], env: Record<string, string | undefined> = {}): CliProcess {
  assertBuilt();
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const waiter of waiters) waiter();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    child,
    output: () => output,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = output.match(pattern);
          if (match) {
            done();
            resolve(match);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out waiting for ${pattern} in:\n${output}`));
        }, timeoutMs);
        const onExit = () => {
          done();
          reject(new Error(`process exited before printing ${pattern}:\n${output}`));
        };
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
          child.off('close', onExit);
        };
        waiters.add(check);
        child.on('close', onExit);
        check();
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
