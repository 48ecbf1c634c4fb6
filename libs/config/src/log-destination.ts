import { destination, type DestinationStream } from 'pino';
import { escapeUnsafe } from '@chronicle/domain';

/**
 * Where a process's pino logger writes: readable lines (pino-pretty) for a person at a terminal,
 * JSON lines for everything else: files, pipes, collectors.
 * Written synchronously either way, so the last lines before an exit are never lost.
 * Either way, what a client sent (a user agent, a name) cannot steer a terminal: JSON escapes C0
 * controls, and escapingStream the rest (C1, bidirectional controls).
 */
export function logDestination(stdout: { isTTY?: boolean } = process.stdout): DestinationStream {
  if (stdout.isTTY !== true) return escapingStream(destination({ dest: 1, sync: true }), 'json');
  // Loaded only on a terminal: a server in production never pays for it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pretty = require('pino-pretty') as typeof import('pino-pretty');
  return escapingStream(
    pretty.build({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }),
    'values',
  );
}

/**
 * Writes each JSON line to `target` with its unsafe characters escaped (escapeUnsafe): as JSON
 * escapes (`json`: the same values), or, for pino-pretty, which prints the values themselves, as
 * text in the values (`values`: C0 controls included, which JSON escapes but pino-pretty prints).
 */
export function escapingStream<T extends DestinationStream>(target: T, into: 'json' | 'values'): T {
  const escape =
    into === 'json'
      ? (line: string) => escapeUnsafe(line.replace(/\n$/, ''))
      : (line: string) =>
          JSON.stringify(
            JSON.parse(line, (_key, value: unknown) =>
              typeof value === 'string' ? escapeUnsafe(value) : value,
            ),
          );
  // The target itself, its write wrapped: its other members (SonicBoom's flushSync, fd) stay.
  const write = target.write.bind(target);
  target.write = (line: string) => write(`${escape(line)}\n`);
  return target;
}
