import { CommandBus } from '@nestjs/cqrs';
import { RegisterCustomerCommand, SYSTEM_ACTOR } from '@chronicle/application';
import { position } from '@chronicle/event-store';
import { ReadStore, runOnRunningServers } from '@chronicle/read-models';
import { jsonLines, runCliProcess } from './support/cli-process';
import { basic, E2E_BACKEND, newDataDir, startTestApp, TestAccount, TestApp } from './support/test-app';

// The control socket serves in-memory read models; with MongoDB the CLI rebuilds the collections itself.
const describeEmbedded = E2E_BACKEND === 'embedded' ? describe : describe.skip;

describeEmbedded('projections rebuild and verify on the embedded default', () => {
  let subject: TestApp;
  let admin: TestAccount;
  let member: TestAccount;

  /** Every customer page and both users, as clients see them. */
  const snapshot = async () => {
    const customers: unknown[] = [];
    for (let page = 1; ; page++) {
      const response = await fetch(`${subject.url}/customers?maxpagesize=1000&page=${page}`, {
        headers: { authorization: basic(admin) },
      });
      const items = (await response.json()) as unknown[];
      customers.push(...items);
      if (!response.headers.get('link')?.includes('rel="next"')) break;
    }
    const readStore = subject.app.get(ReadStore);
    return {
      customers,
      users: [await readStore.getUser(admin.userId), await readStore.getUser(member.userId)],
    };
  };

  beforeAll(async () => {
    subject = await startTestApp();
    admin = await subject.createAccount({ admin: true });
    member = await subject.createAccount({ name: 'Member' });
    await subject.seedCustomers(20_000);
    const patched = await fetch(`${subject.url}/users/${member.userId}`, {
      method: 'PATCH',
      headers: { authorization: basic(admin), 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ name: 'Renamed', age: 44 }),
    });
    expect(patched.status).toBe(200);
    await subject.settle();
  });
  afterAll(() => subject.destroy());

  it('rebuilds from the CLI while the server runs: the server serves identical models afterwards', async () => {
    const before = await snapshot();
    const liveStore = subject.app.get(ReadStore);
    const result = await runCliProcess(subject.dataDir, 'projections', 'rebuild');
    expect(result.code).toBe(0);
    const lines = jsonLines(result.stdout);
    expect(lines).toEqual([
      { events: expect.any(Number), seconds: expect.any(Number), eventsPerSecond: expect.any(Number) },
    ]);
    // 20,000 customers and the users: the replay reads only the event types the projections use,
    // not the 20,000 customer number assignments beside them.
    expect(lines[0].events).toBeGreaterThanOrEqual(20_003);
    // Not a terminal here: progress comes as JSON lines on stderr.
    for (const line of jsonLines(result.stderr)) expect(line).toHaveProperty('progress.events');
    expect(subject.app.get(ReadStore)).toBe(liveStore);
    expect(await snapshot()).toEqual(before);
  });

  it('leaves the live models untouched when a rebuild is interrupted halfway', async () => {
    const before = await snapshot();
    const controller = new AbortController();
    const interrupted = runOnRunningServers(subject.dataDir, 'rebuild', {
      onProgress: () => controller.abort(new Error('interrupted by the test')),
      signal: controller.signal,
    });
    await expect(interrupted).rejects.toThrow('interrupted by the test');
    expect(await snapshot()).toEqual(before);
    // The server is not left busy: the next rebuild runs.
    const [result] = await runOnRunningServers(subject.dataDir, 'rebuild');
    expect(result.events).toBeGreaterThanOrEqual(20_003);
    expect(await snapshot()).toEqual(before);
  });

  it('loses no event written while a rebuild runs', async () => {
    const commands = subject.app.get(CommandBus);
    const context = { actor: SYSTEM_ACTOR, correlationId: 'during-rebuild' };
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing || written < 50) {
        await commands.execute(
          new RegisterCustomerCommand(`During ${written}`, `during${written}@example.com`, context),
        );
        written++;
      }
    })();
    const [result] = await runOnRunningServers(subject.dataDir, 'rebuild');
    writing = false;
    await writer;
    await subject.settle();
    expect(result.events).toBeGreaterThan(0);
    const page = await subject.app.get(ReadStore).listCustomers({ offset: 0, limit: 0 });
    expect(page.total).toBe(20_000 + written);
    const [verified] = await runOnRunningServers(subject.dataDir, 'verify');
    expect(verified).toMatchObject({ differences: 0 });
  });

  it('verify finds a deliberately corrupted read model, and a rebuild repairs it', async () => {
    const clean = await runCliProcess(subject.dataDir, 'projections', 'verify');
    expect(clean.code).toBe(0);
    expect(jsonLines(clean.stdout)[0]).toMatchObject({ differences: 0 });

    // A change no event made, at a position no replay reaches, so the live runner keeps it.
    const far = position(2n ** 62n);
    await subject.app.get(ReadStore).applyBatch(
      [
        { collection: 'customers', id: 7, position: far, set: { name: 'Mallory' } },
        { collection: 'users', id: member.userId, position: far, set: { age: 99 } },
      ],
      { projection: 'corruption', position: far },
    );
    const corrupted = await runCliProcess(subject.dataDir, 'projections', 'verify');
    expect(corrupted.code).toBe(1);
    const [report] = jsonLines(corrupted.stdout);
    expect(report.differences).toBe(2);
    expect(report.first).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          collection: 'customers',
          id: 7,
          live: expect.objectContaining({ name: 'Mallory' }),
        }),
        expect.objectContaining({
          collection: 'users',
          id: member.userId,
          rebuilt: expect.objectContaining({ age: 44 }),
        }),
      ]),
    );

    expect((await runCliProcess(subject.dataDir, 'projections', 'rebuild')).code).toBe(0);
    expect((await subject.app.get(ReadStore).getUser(member.userId))?.age).toBe(44);
    expect((await runCliProcess(subject.dataDir, 'projections', 'verify')).code).toBe(0);
  });
});

describeEmbedded('projections with the server stopped', () => {
  it('rebuild replays the history; verify says there are no live models to compare', async () => {
    const subject = await startTestApp({ dataDir: newDataDir() });
    await subject.seedCustomers(10);
    await subject.stop();
    try {
      const rebuilt = await runCliProcess(subject.dataDir, 'projections', 'rebuild');
      expect(rebuilt.code).toBe(0);
      expect(jsonLines(rebuilt.stdout)).toEqual([
        // The 10 registrations; their 10 customer number assignments are not read.
        { events: 10, seconds: expect.any(Number), eventsPerSecond: expect.any(Number) },
      ]);

      const verified = await runCliProcess(subject.dataDir, 'projections', 'verify');
      expect(verified.code).toBe(1);
      expect(jsonLines(verified.stderr)[0]).toMatchObject({ error: 'no-live-read-models' });
    } finally {
      await subject.destroy();
    }
  });
});
