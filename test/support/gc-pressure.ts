import { join } from 'node:path';

/**
 * Node options that keep the garbage collector busy while a process runs: a 1 MiB young
 * generation, so that allocation starts collections all the time, and a full collection asked for
 * every 10 ms (gc-pressure.preload.js). Native objects (the embedded store's statements) are then
 * finalised while others come and go, from V8's own tasks, outside any JavaScript context: where
 * better-sqlite3 12 and older aborted on Node 24 (issue 31).
 */
export const GC_PRESSURE: readonly string[] = [
  '--expose-gc',
  '--max-semi-space-size=1',
  '-r',
  join(__dirname, 'gc-pressure.preload.js'),
];
