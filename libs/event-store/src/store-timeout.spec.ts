import { isStoreUnavailable, StoreTimeoutError, withinDeadline } from './store-unavailable';

describe('withinDeadline', () => {
  it('gives the answer that comes in time', async () => {
    await expect(withinDeadline(Promise.resolve(7), 1_000, 'a store')).resolves.toBe(7);
  });

  it('gives up on one that does not, as an outage, and ignores its late failure', async () => {
    let fail!: (error: Error) => void;
    const late = new Promise<never>((_, reject) => (fail = reject));
    const outcome = withinDeadline(late, 10, 'EventStoreDB');
    await expect(outcome).rejects.toThrow(new StoreTimeoutError('EventStoreDB', 10));
    expect(isStoreUnavailable(await outcome.catch((error: unknown) => error))).toBe(true);
    fail(new Error('too late'));
  });
});
