import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { parseCpuSeconds, processCpuSeconds } from './cpu';

describe('server CPU time from /proc/<pid>/stat', () => {
  it('adds utime and stime (fields 14 and 15) in clock ticks, counted after the command name', () => {
    // A command name may hold spaces and parentheses: the fields are counted from its last ')'.
    const stat = '4242 (node (a) b) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 11 0 9 0 0';
    expect(parseCpuSeconds(stat, 100)).toBeCloseTo(2.87, 10);
  });

  it('refuses a line that is not a stat line', () => {
    expect(() => parseCpuSeconds('not a stat line', 100)).toThrow('Not a /proc stat line');
  });

  it('counts what a process spent, as the process itself counts it', async () => {
    // The child spins for 0.3 s of its own CPU time, then idles until killed.
    const child = spawn(process.execPath, [
      '-e',
      'const end = process.cpuUsage().user + 300000; while (process.cpuUsage().user < end); setInterval(() => {}, 1000);',
    ]);
    try {
      let used = processCpuSeconds(child.pid ?? 0);
      const deadline = Date.now() + 20_000;
      while (used < 0.3 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        used = processCpuSeconds(child.pid ?? 0);
      }
      expect(used).toBeGreaterThanOrEqual(0.3);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
});
