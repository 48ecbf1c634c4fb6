import { checkHealth } from './health-checks';

describe('checkHealth', () => {
  it('is ok with no checks, and when every check passes, by name in the order given', async () => {
    expect(await checkHealth({})).toEqual({ status: 'ok', details: {} });
    const report = await checkHealth({
      eventStore: () => Promise.resolve(),
      historyChain: () => ({ status: 'up' }),
    });
    expect(report).toEqual({
      status: 'ok',
      details: { eventStore: { status: 'up' }, historyChain: { status: 'up' } },
    });
    expect(Object.keys(report.details)).toEqual(['eventStore', 'historyChain']);
  });

  it("is an error when one check is down, keeping that check's details", async () => {
    const down = { status: 'down' as const, message: 'catching up with the event history', head: '42' };
    expect(
      await checkHealth({ eventStore: () => undefined, readModels: () => Promise.resolve(down) }),
    ).toEqual({
      status: 'error',
      details: { eventStore: { status: 'up' }, readModels: down },
    });
  });

  it("takes a check that throws as down, saying the error's message (or only that it is unreachable)", async () => {
    expect(
      await checkHealth({
        readStore: () => Promise.reject(new Error('connection refused')),
        eventStore: () => {
          // What some drivers throw: no Error, so no message of its own.
          // eslint-disable-next-line @typescript-eslint/only-throw-error
          throw 'no Error';
        },
      }),
    ).toEqual({
      status: 'error',
      details: {
        readStore: { status: 'down', message: 'connection refused' },
        eventStore: { status: 'down', message: 'unreachable' },
      },
    });
  });
});
