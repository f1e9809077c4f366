// CPU time from /proc: of one process (all its threads), and of one core (whoever ran on it), in ms.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** /proc counts CPU time in clock ticks (USER_HZ): almost always 100 per second, but ask rather than assume. */
function readClockTicks(): number {
  const result = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const ticks = Number(result.stdout?.trim());
  return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
}

/** Milliseconds per clock tick, read once: it cannot change while the system runs. */
const MS_PER_TICK = 1000 / readClockTicks();

/** User + system CPU time of a process in ms, from /proc/<pid>/stat (fields 14 and 15), or undefined. */
export function readProcessCpuMs(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return Number.isFinite(ticks) ? ticks * MS_PER_TICK : undefined;
}

/**
 * Busy time of one core (or of all cores together when `core` is undefined) in ms, from /proc/stat:
 * user + nice + system + irq + softirq + steal. Steal counts because time the hypervisor gave to another
 * guest is time the gateway did not get, which is exactly the noise a shared machine adds.
 */
export function readCoreBusyMs(core: number | undefined): number | undefined {
  const times = readCoreTimesMs(core);
  if (!times) return undefined;
  const busy = times.processes + times.interrupts + times.steal;
  return Number.isFinite(busy) ? busy : undefined;
}

/**
 * The busy time of one core in ms, split: `processes` (user + nice + system: whatever process ran there),
 * `interrupts` (irq + softirq: the kernel's own work there, such as loopback network traffic, which it
 * does for the sockets of whoever runs on the core) and `steal` (time the hypervisor gave another guest).
 */
export function readCoreTimesMs(core: number | undefined): { processes: number; interrupts: number; steal: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/stat', 'utf8');
  } catch {
    return undefined;
  }
  const label = core === undefined ? 'cpu' : `cpu${core}`;
  const line = stat.split('\n').find((l) => l.startsWith(`${label} `));
  if (!line) return undefined;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return { processes: (user + nice + system) * MS_PER_TICK, interrupts: (irq + softirq) * MS_PER_TICK, steal: (steal ?? 0) * MS_PER_TICK };
}
