import { logDestination } from './log-destination';

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
