import { isStoreUnavailable, StoreTimeoutError, withinDeadline } from './store-unavailable';

describe('withinDeadline', () => {
  it('gives the answer that comes in time, and leaves no timer behind', async () => {
    jest.useFakeTimers();
    try {
      await expect(withinDeadline(Promise.resolve(7), 1_000, 'a store')).resolves.toBe(7);
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('gives up on one that does not, as an outage, and ignores its late failure', async () => {
    let fail!: (error: Error) => void;
    const late = new Promise<never>((_, reject) => (fail = reject));
    const outcome = withinDeadline(late, 10, 'EventStoreDB');
    const error: unknown = await outcome.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreTimeoutError);
    expect(error).toMatchObject({
      name: 'StoreTimeoutError',
      message: 'EventStoreDB got no answer within 10 ms',
    });
    expect(isStoreUnavailable(error)).toBe(true);
    fail(new Error('too late'));
  });
});
