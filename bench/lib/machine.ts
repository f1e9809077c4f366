// What the figures were measured on: a ratio is only comparable with the machine, load and commit beside it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { PACKAGE_ROOT } from '../../src/config/paths.js';

export interface MachineInfo {
  cores: number;
  cpuModel: string;
  memoryMb: number;
  node: string;
  /** 1, 5 and 15 minute load averages when the run started: high values mean a busy shared machine. */
  loadAverage: number[];
  /** `git describe` of the router under test; "-dirty" when the work tree had changes. */
  commit: string;
  kernel: string;
}

export function describeMachine(): MachineInfo {
  const git = spawnSync('git', ['describe', '--always', '--dirty'], { cwd: PACKAGE_ROOT, encoding: 'utf8' });
  let kernel = 'unknown';
  try {
    kernel = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
  } catch {
    // Not Linux: the kernel string is a nicety.
  }
  return {
    cores: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryMb: Math.round(totalmem() / 2 ** 20),
    node: process.version,
    loadAverage: loadavg().map((l) => Number(l.toFixed(2))),
    commit: git.status === 0 ? git.stdout.trim() : 'unknown',
    kernel,
  };
}
