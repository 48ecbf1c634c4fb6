import pino, { type DestinationStream } from 'pino';
import { escapingStream, logDestination } from './log-destination';

describe('logDestination', () => {
  it('writes readable lines on a terminal, JSON otherwise', () => {
    const pretty = logDestination({ isTTY: true }) as unknown as { pipe?: unknown };
    const json = logDestination({ isTTY: false }) as unknown as { fd?: number };
    // pino-pretty's stream is a Transform; pino's own destination is a SonicBoom on stdout.
    expect(typeof pretty.pipe).toBe('function');
    expect(json.fd).toBe(1);
    expect(pretty).not.toBe(json);
  });
});

/** What a logger writes through escapingStream, line by line. */
function written(into: 'json' | 'values', log: (logger: pino.Logger) => void): string[] {
  const lines: string[] = [];
  const target: DestinationStream = { write: (line: string) => void lines.push(line) };
  log(pino({ base: null, timestamp: false }, escapingStream(target, into)));
  return lines;
}

describe('escapingStream', () => {
  const userAgent = 'A\u009b2J \u202edlrow\u2069 \u0007 caf\u00e9';

  it('writes JSON lines whose C1 and bidirectional controls are escaped, with the same values', () => {
    const [line] = written('json', (logger) => logger.info({ userAgent }, 'request completed'));
    expect(line.endsWith('\n')).toBe(true);
    // eslint-disable-next-line no-control-regex -- control characters are what it looks for
    expect(line.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(JSON.parse(line)).toMatchObject({ userAgent, msg: 'request completed' });
  });

  it('for pino-pretty, puts the escapes themselves in the values it prints', () => {
    const [line] = written('values', (logger) => logger.info({ userAgent }, 'x'));
    expect((JSON.parse(line) as { userAgent: string }).userAgent).toBe(
      'A\\u009b2J \\u202edlrow\\u2069 \\u0007 caf\u00e9',
    );
  });
});
