import { Writable } from 'node:stream';
import pino from 'pino';

/** A pino logger at `level` (or with `options`) whose lines are parsed into `lines`. */
export function recordingLogger(level = 'info', options: pino.LoggerOptions = { level }) {
  const lines: Array<Record<string, any>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, any>);
      done();
    },
  });
  return { logger: pino(options, sink), lines };
}
