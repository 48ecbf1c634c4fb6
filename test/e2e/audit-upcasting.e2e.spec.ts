import { randomUUID } from 'node:crypto';
import { ReadStore } from '@chronicle/read-models';
import { rawStore } from './support/backend';
import { jsonLines, runCliProcess } from './support/cli-process';
import { basic, newDataDir, startTestApp, TestAccount, TestApp } from './support/test-app';

describe('an event stored as UserRegistered.v1', () => {
  const userId = randomUUID();
  let subject: TestApp;
  let admin: TestAccount;

  beforeAll(async () => {
    const dataDir = newDataDir();
    const legacy = await rawStore(dataDir);
    await legacy.append(
      `user-${userId}`,
      [
        {
          id: randomUUID(),
          type: 'UserRegistered.v1',
          data: { userId, accountId: null, name: 'Grace', age: 85, createdon: '2020-02-29T13:00:00+01:00' },
          metadata: {
            actor: 'system',
            correlationId: 'legacy-import',
            causationId: null,
            occurredAt: '2020-02-29T12:00:00.000Z',
          },
        },
      ],
      'no_stream',
    );
    await legacy.close();
    subject = await startTestApp({ dataDir });
    admin = await subject.createAccount({ admin: true });
    await subject.settle();
  });
  afterAll(() => subject.destroy());

  it('is stored as it was written', async () => {
    const raw = await rawStore(subject.dataDir);
    try {
      expect((await raw.readStream(`user-${userId}`))[0].type).toBe('UserRegistered.v1');
    } finally {
      await raw.close();
    }
  });

  it('reaches the projection as v2', async () => {
    expect(await subject.app.get(ReadStore).getUser(userId)).toEqual({
      id: userId,
      name: 'Grace',
      age: 85,
      createdon: '2020-02-29T12:00:00.000Z',
      modifiedon: '2020-02-29T12:00:00.000Z',
      revision: 0,
    });
  });

  it('reaches the aggregate as v2: the user can be patched, its createdon normalised', async () => {
    const response = await fetch(`${subject.url}/users/${userId}`, {
      method: 'PATCH',
      headers: { authorization: basic(admin), 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ age: 86 }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      id: userId,
      age: 86,
      createdon: '2020-02-29T12:00:00.000Z',
    });
  });

  it('shows as stored in the raw audit of the CLI, and only there as v1', async () => {
    const raw = await runCliProcess(subject.dataDir, 'audit', '--raw', '--type', 'UserRegistered.v1');
    expect(raw.code).toBe(0);
    const [record, manifest, cursor] = jsonLines(raw.stdout);
    expect(record).toMatchObject({
      stream: `user-${userId}`,
      type: 'UserRegistered.v1',
      // As the older writer stored it: its offset kept, no modifiedon.
      data: { userId, accountId: null, name: 'Grace', age: 85, createdon: '2020-02-29T13:00:00+01:00' },
    });
    expect(manifest).toEqual({
      manifest: expect.objectContaining({ head: expect.any(String), count: 1, lastRecordHash: record.hash }),
    });
    expect(manifest.manifest.chain).toMatchObject({ ok: true, head: { position: manifest.manifest.head } });
    expect(cursor).toEqual({ cursor: manifest.manifest.head });
    const upcast = await runCliProcess(subject.dataDir, 'audit', '--type', 'UserRegistered.v1');
    expect(jsonLines(upcast.stdout)[0]).toEqual({
      manifest: expect.objectContaining({ head: expect.any(String), count: 0, lastRecordHash: null }),
    });
  });

  it('reaches the audit as v2', async () => {
    const response = await fetch(`${subject.url}/api/v1/audit/events?stream=user-${userId}`, {
      headers: { authorization: basic(admin) },
    });
    const [registered] = (await response.json()) as Array<Record<string, any>>;
    expect(registered).toMatchObject({
      type: 'UserRegistered.v2',
      revision: 0,
      correlationId: 'legacy-import',
      data: { userId, createdon: '2020-02-29T12:00:00.000Z' },
    });
  });
});
