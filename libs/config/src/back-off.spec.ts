import { backOffDelay } from './back-off';

describe('backOffDelay', () => {
  afterEach(() => jest.restoreAllMocks());

  it('doubles from the initial delay per attempt up to the maximum', () => {
    const delays = [1, 2, 3, 4, 5, 6].map((attempt) =>
      backOffDelay(attempt, { initialMs: 100, maxMs: 1000 }),
    );
    expect(delays).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('grows without a maximum, and stops doubling where any maximum in use was long reached', () => {
    expect(backOffDelay(4, { initialMs: 100 })).toBe(800);
    expect(backOffDelay(1000, { initialMs: 1 })).toBe(2 ** 30);
  });

  it('treats an attempt below 1 as the first', () => {
    expect(backOffDelay(0, { initialMs: 100, maxMs: 1000 })).toBe(100);
  });

  it('with full jitter waits anywhere from nothing up to the delay', () => {
    jest.spyOn(Math, 'random').mockReturnValueOnce(0).mockReturnValueOnce(0.5).mockReturnValueOnce(0.999);
    const backOff = { initialMs: 10, maxMs: 200, jitter: 'full' } as const;
    expect(backOffDelay(3, backOff)).toBe(0);
    expect(backOffDelay(3, backOff)).toBe(20);
    expect(backOffDelay(9, backOff)).toBeCloseTo(199.8);
  });

  it('with equal jitter waits in the upper half of the delay, in whole milliseconds', () => {
    jest.spyOn(Math, 'random').mockReturnValueOnce(0).mockReturnValueOnce(0.5).mockReturnValueOnce(1);
    const backOff = { initialMs: 50, maxMs: 1000, jitter: 'equal' } as const;
    expect(backOffDelay(2, backOff)).toBe(50);
    expect(backOffDelay(2, backOff)).toBe(75);
    expect(backOffDelay(10, backOff)).toBe(1000);
  });
});
