import { ProgressReporter } from './progress-reporter';

describe('ProgressReporter', () => {
  let written: string[];

  beforeEach(() => {
    written = [];
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
  });
  afterEach(() => jest.restoreAllMocks());

  it('off a terminal, writes JSON progress lines named by its unit, at most one a second', () => {
    const reporter = new ProgressReporter('customers', false);
    reporter.update({ done: 2000, fraction: 0.4 });
    reporter.update({ done: 4000, fraction: 0.8 });
    expect(written).toHaveLength(1);
    expect(JSON.parse(written[0])).toEqual({
      progress: {
        customers: 2000,
        customersPerSecond: expect.any(Number),
        percent: 40,
        secondsLeft: expect.any(Number),
      },
    });
    reporter.complete(5000);
    expect(written).toHaveLength(1);
  });

  it('on a terminal, ends the bar at 100% however far the last report got', () => {
    // cli-progress draws only on a terminal.
    const wasTTY = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
    Object.defineProperty(process.stderr, 'isTTY', { value: true, configurable: true });
    try {
      const reporter = new ProgressReporter('events', true);
      reporter.update({ done: 890, fraction: 0.89 });
      reporter.complete(1000);
    } finally {
      if (wasTTY) Object.defineProperty(process.stderr, 'isTTY', wasTTY);
      else delete (process.stderr as { isTTY?: boolean }).isTTY;
    }
    // eslint-disable-next-line no-control-regex
    const frames = written.join('').replace(/\u001b(\[[0-9;?]*[A-Za-z]|[78])/g, '');
    // The bar redraws at most so often: the 89% may never be drawn, the end always is, last.
    expect(frames).toMatch(/100% \| 1000 events \| \d+ events\/s \| 0s left\W*$/);
  });
});
