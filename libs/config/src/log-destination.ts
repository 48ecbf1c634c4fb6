import { destination, type DestinationStream } from 'pino';

/**
 * Where a process's pino logger writes: readable lines (pino-pretty) for a person at a terminal,
 * JSON lines for everything else: files, pipes, collectors.
 * Written synchronously either way, so the last lines before an exit are never lost.
 */
export function logDestination(stdout: { isTTY?: boolean } = process.stdout): DestinationStream {
  if (stdout.isTTY !== true) return destination({ dest: 1, sync: true });
  // Loaded only on a terminal: a server in production never pays for it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pretty = require('pino-pretty') as typeof import('pino-pretty');
  return pretty.build({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}
