import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's times (USER_HZ): 100 on every Linux the bench runs on. */
const TICKS_PER_SECOND = ((): number => {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU seconds (user and system) a process has used so far, from /proc/<pid>/stat. The fields
 * after the command name, which is in parentheses and may itself hold spaces or parentheses,
 * are counted from its closing one: utime and stime are the 14th and 15th fields of the line.
 */
export function processCpuSeconds(pid: number): number {
  return parseCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

export function parseCpuSeconds(stat: string, ticksPerSecond = TICKS_PER_SECOND): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is the 3rd field (state): utime is the 14th, stime the 15th.
  const utime = Number(fields[14 - 3]);
  const stime = Number(fields[15 - 3]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`Not a /proc stat line: ${stat}`);
  return (utime + stime) / ticksPerSecond;
}

/** CPU seconds this process (the load generator) has used so far. */
export function ownCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}
