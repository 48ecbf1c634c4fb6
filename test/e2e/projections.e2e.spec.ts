import { randomUUID } from 'node:crypto';
import { CommandBus } from '@nestjs/cqrs';
import { RegisterCustomerCommand, SYSTEM_ACTOR, SYSTEM_AUTH } from '@chronicle/application';
import { EventStore, formatPosition, position } from '@chronicle/event-store';
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
      {
        events: expect.any(Number),
        seconds: expect.any(Number),
        eventsPerSecond: expect.any(Number),
        parked: { count: 0, first: [] },
      },
    ]);
    // 20,000 customers and the users: the replay skips the event types this build knows and no
    // projection uses, such as the 20,000 customer number assignments beside them.
    expect(lines[0].events).toBeGreaterThanOrEqual(20_003);
    // Not a terminal here: progress comes as JSON lines on stderr.
    for (const line of jsonLines(result.stderr)) expect(line).toHaveProperty('progress.events');
    expect(subject.app.get(ReadStore)).toBe(liveStore);
    expect(await snapshot()).toEqual(before);
  });

  it('rebuilds one projection from the CLI: its collection is rebuilt, the others stay as they are', async () => {
    const before = await snapshot();
    const readStore = subject.app.get(ReadStore);
    // Documents no event made, one in each collection: only the rebuilt collection loses its own.
    await readStore.applyBatch(
      [
        {
          collection: 'customers',
          id: 999_999_999,
          position: position(1),
          set: { name: 'stray', email: 'stray@example.com', createdon: '2026-01-01T00:00:00.000Z' },
        },
        { collection: 'users', id: 'u-stray', position: position(1), set: { name: 'stray' } },
      ],
      { projection: 'stray-test', position: position(1) },
    );

    const result = await runCliProcess(subject.dataDir, 'projections', 'rebuild', '--projection', 'users');
    expect(result.code).toBe(0);
    // The users projection reads user events only: the admin's and the member's, and the patch.
    expect(jsonLines(result.stdout)).toEqual([expect.objectContaining({ events: 3 })]);
    expect(await readStore.getUser('u-stray')).toBeNull();
    expect((await readStore.listCustomers({ gt: 999_999_998, offset: 0, limit: 1 })).items).toEqual([
      { id: 999_999_999, name: 'stray', email: 'stray@example.com', createdon: '2026-01-01T00:00:00.000Z' },
    ]);
    expect((await snapshot()).users).toEqual(before.users);

    const unknown = await runCliProcess(subject.dataDir, 'projections', 'rebuild', '--projection', 'nobody');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('nobody');

    // And the other one, over the control socket: the stray customer goes too.
    const [customers] = await runOnRunningServers(subject.dataDir, 'rebuild', { projection: 'customers' });
    expect(customers.events).toBeGreaterThanOrEqual(20_000);
    expect((await readStore.listCustomers({ gt: 999_999_998, offset: 0, limit: 1 })).items).toEqual([]);
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
    const context = { actor: SYSTEM_ACTOR, correlationId: 'during-rebuild', auth: SYSTEM_AUTH };
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing || written < 50) {
        await commands.execute(
          new RegisterCustomerCommand(
            { name: `During ${written}`, email: `during${written}@example.com` },
            context,
          ),
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
        {
          events: 10,
          seconds: expect.any(Number),
          eventsPerSecond: expect.any(Number),
          parked: { count: 0, first: [] },
        },
      ]);

      const verified = await runCliProcess(subject.dataDir, 'projections', 'verify');
      expect(verified.code).toBe(1);
      expect(jsonLines(verified.stderr)[0]).toMatchObject({ error: 'no-live-read-models' });
    } finally {
      await subject.destroy();
    }
  });
});

describeEmbedded('projections rebuild and verify with a stored event this build does not know', () => {
  let subject: TestApp;
  let member: TestAccount;
  const foreignType = 'UserRegistered.v3';
  const foreign = { id: randomUUID(), userId: randomUUID(), position: '' };

  const parkedOnStatus = async () => {
    const status = await runCliProcess(subject.dataDir, 'projections', 'status');
    expect(status.code).toBe(0);
    return (jsonLines(status.stdout)[0].parked as Array<Record<string, unknown>>).filter(
      (message) => message.processor === 'read-models',
    );
  };

  beforeAll(async () => {
    subject = await startTestApp();
    member = await subject.createAccount({ name: 'Member', age: 30 });
    // As a newer build (rolled back since) would have written it, in a stream the projections follow.
    const appended = await subject.app.get(EventStore).append(
      `user-${foreign.userId}`,
      [
        {
          id: foreign.id,
          type: foreignType,
          data: { userId: foreign.userId, name: 'From the future', age: 50, nickname: 'x' },
          metadata: {
            actor: 'newer-build',
            correlationId: randomUUID(),
            causationId: null,
            occurredAt: new Date().toISOString(),
          },
        },
      ],
      'no_stream',
    );
    foreign.position = formatPosition(appended.position);
    await subject.settle();
    // The live processor's rule: parked, with its reason.
    expect(await parkedOnStatus()).toEqual([
      expect.objectContaining({ eventId: foreign.id, type: foreignType, position: foreign.position }),
    ]);
  });
  afterAll(() => subject.destroy());

  const expectedParked = () => ({
    count: 1,
    first: [
      {
        position: foreign.position,
        eventId: foreign.id,
        stream: `user-${foreign.userId}`,
        type: foreignType,
        reason: expect.stringContaining(`${foreignType} is not an event type this build knows`),
      },
    ],
  });

  it('verify reports it and fails: the read models cannot be shown to hold what it changed', async () => {
    const verified = await runCliProcess(subject.dataDir, 'projections', 'verify');
    expect(verified.code).toBe(1);
    expect(jsonLines(verified.stdout)).toEqual([
      expect.objectContaining({ differences: 0, parked: expectedParked() }),
    ]);
    expect(jsonLines(verified.stderr)).toContainEqual({
      warning: 'unprojectable-events',
      message: expect.stringMatching(new RegExp(`${foreignType} at position ${foreign.position}\\b`)),
    });
  });

  it('rebuild parks it as the live processor does, reports it, and the read models are the live ones', async () => {
    const readStore = subject.app.get(ReadStore);
    const before = await readStore.getUser(member.userId);
    // Dropped by an operator: the rebuild must set it aside again, not skip it unnoticed.
    const dropped = await runCliProcess(
      subject.dataDir,
      'projections',
      'parked',
      'drop',
      'read-models',
      foreign.id,
    );
    expect(dropped.code).toBe(0);
    expect(await parkedOnStatus()).toEqual([]);

    const rebuilt = await runCliProcess(subject.dataDir, 'projections', 'rebuild');
    expect(rebuilt.code).toBe(0);
    expect(jsonLines(rebuilt.stdout)).toEqual([expect.objectContaining({ parked: expectedParked() })]);
    expect(jsonLines(rebuilt.stderr)).toContainEqual({
      warning: 'unprojectable-events',
      message: expect.stringContaining(`${foreignType} at position ${foreign.position}`),
    });
    expect(await parkedOnStatus()).toEqual([
      expect.objectContaining({
        eventId: foreign.id,
        type: foreignType,
        position: foreign.position,
        attempts: 1,
      }),
    ]);
    expect(await readStore.getUser(foreign.userId)).toBeNull();
    expect(await readStore.getUser(member.userId)).toEqual(before);
  });
});
