import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { Api, startApi, stopRunning } from '../support/app-process';
import { esdbDoubleOf } from './support/backend';
import { jsonLines, runCliProcess } from './support/cli-process';
import { backendEnv, basic, E2E_BACKEND, startTestApp, TestAccount } from './support/test-app';

const EDITED_NAME = 'Mallory Edited';

/**
 * Issue 37, finding 1: the reproduction. Stop the server, change customer 3's name in its first
 * event keeping the stored hash (on the embedded store after dropping the triggers, on EventStoreDB
 * in the log itself), start again: the running service must say the history breaks there.
 */
describe('a history edited while the server was stopped', () => {
  let dataDir: string;
  let auditor: TestAccount;
  let brokenAt: string;
  let storedHash: string;
  let api: Api;
  let seal: Record<string, unknown>;

  const get = (path: string, account = auditor) =>
    fetch(`${api.url}${path}`, { headers: { authorization: basic(account) } });

  beforeAll(async () => {
    const first = await startTestApp();
    dataDir = first.dataDir;
    auditor = await first.createAccount({ auditor: true });
    await first.seedCustomers(5);
    const records = (await (
      await fetch(`${first.url}/api/v1/audit/events?stream=customer-3`, {
        headers: { authorization: basic(auditor) },
      })
    ).json()) as Array<Record<string, any>>;
    brokenAt = records[0].position;
    storedHash = records[0].hash;
    const sealed = await runCliProcess(dataDir, 'audit', 'seal');
    expect(sealed.code).toBe(0);
    seal = jsonLines(sealed.stdout)[0];
    await first.stop();

    await editCustomerThree(dataDir);
    api = await startApi(dataDir, await backendEnv(dataDir));
  });
  afterAll(() => stopRunning());

  it('logs the break at once, with its first broken position', async () => {
    await api.process.waitForOutput(new RegExp(`hash chain breaks at position ${brokenAt}\\b`));
  });

  it('turns readiness to 503, naming the first broken position', async () => {
    await api.process.waitForOutput(/hash chain breaks/);

    const ready = await fetch(`${api.url}/health/ready`);

    expect(ready.status).toBe(503);
    const body = (await ready.json()) as Record<string, any>;
    expect(body.checks.historyChain).toMatchObject({
      status: 'down',
      firstBroken: { position: brokenAt, stream: 'customer-3', revision: 0 },
    });
  });

  it('flags the edited record on the audit page, and names the position in a header', async () => {
    const response = await get('/api/v1/audit/events?stream=customer-3');

    expect(response.status).toBe(200);
    expect(response.headers.get('chronicle-chain-broken')).toBe(brokenAt);
    const [edited, ...rest] = (await response.json()) as Array<Record<string, any>>;
    expect(edited).toMatchObject({
      position: brokenAt,
      hash: storedHash,
      data: expect.objectContaining({ name: EDITED_NAME }),
      chainBroken: expect.stringContaining('was changed, inserted or removed'),
    });
    for (const record of rest) expect(record).not.toHaveProperty('chainBroken');
  });

  it('answers GET /api/v1/audit/verify with the break, and a seal taken before it still checks', async () => {
    const response = await get(`/api/v1/audit/verify?seal=${encodeURIComponent(JSON.stringify(seal))}`);

    expect(response.status).toBe(200);
    expect(response.headers.get('chronicle-chain-broken')).toBe(brokenAt);
    expect(await response.json()).toEqual({
      ok: false,
      checked: expect.any(Number),
      head: expect.anything(),
      firstBroken: {
        position: brokenAt,
        stream: 'customer-3',
        revision: 0,
        reason: expect.stringContaining('was changed'),
      },
      seal: expect.objectContaining({ position: seal.position }),
    });
  });
});

describe("recomputing a record's hash from what the audit serves", () => {
  it('serves, with withChain=true, the text each hash is the SHA-256 of, and null where data holds a secret', async () => {
    const subject = await startTestApp();
    try {
      const auditor = await subject.createAccount({ auditor: true });
      await subject.seedCustomers(3);
      const response = await fetch(`${subject.url}/api/v1/audit/events?withChain=true&limit=1000`, {
        headers: { authorization: basic(auditor) },
      });
      const records = (await response.json()) as Array<Record<string, any>>;
      const recomputable = records.filter((record) => record.chained !== null);

      expect(response.status).toBe(200);
      // Account events hold a password hash, and personal values are stored encrypted: neither is
      // served, so those events are not recomputable from the audit.
      expect(records.filter((record) => record.chained === null).map((record) => record.type)).toEqual(
        expect.arrayContaining(['AccountOpened.v1', 'UserRegistered.v2', 'CustomerRegistered.v1']),
      );
      expect(recomputable.length).toBeGreaterThanOrEqual(3);
      const embedded = E2E_BACKEND === 'embedded';
      let before = '0'.repeat(64);
      const streamHeads = new Map<string, string>();
      for (const record of records) {
        // What the hash chains to: the log's event before it on the embedded store, the stream's on EventStoreDB.
        const chainedTo = embedded ? before : (streamHeads.get(record.stream) ?? '0'.repeat(64));
        before = record.hash;
        streamHeads.set(record.stream, record.hash);
        if (record.chained === null) continue;
        expect(
          createHash('sha256')
            .update(record.chained as string, 'utf8')
            .digest('hex'),
        ).toBe(record.hash);
        const [format, position, id, stream, revision, type, data, metadata, recordedAt, previous] =
          JSON.parse(record.chained as string) as [
            string,
            string | null,
            string,
            string,
            number,
            string,
            string,
            string,
            string | null,
            string,
          ];
        expect({ format, position, id, stream, revision, recordedAt, previous }).toEqual({
          format: 'chronicle-chain-1',
          position: embedded ? record.position : null,
          id: record.id,
          stream: record.stream,
          revision: record.revision,
          recordedAt: embedded ? record.recordedAt : null,
          previous: chainedTo,
        });
        expect(JSON.parse(metadata)).toMatchObject({
          actor: record.actor,
          correlationId: record.correlationId,
        });
        if (type === record.type) expect(JSON.parse(data)).toEqual(record.data);
      }
      const withoutChain = (await (
        await fetch(`${subject.url}/api/v1/audit/events?limit=3`, {
          headers: { authorization: basic(auditor) },
        })
      ).json()) as Array<Record<string, any>>;
      for (const record of withoutChain) expect(record).not.toHaveProperty('chained');
    } finally {
      await subject.destroy();
    }
  });
});

describe('GET /api/v1/audit/verify on an intact history', () => {
  it('answers ok with the events checked, for an auditor with a seal, refuses others and forged seals', async () => {
    const subject = await startTestApp();
    try {
      const auditor = await subject.createAccount({ auditor: true });
      const member = await subject.createAccount();
      await subject.seedCustomers(2);
      const sealed = await runCliProcess(subject.dataDir, 'audit', 'seal');
      const seal = jsonLines(sealed.stdout)[0];
      const verify = (query: string, account = auditor) =>
        fetch(`${subject.url}/api/v1/audit/verify${query}`, { headers: { authorization: basic(account) } });

      const plain = await verify('');
      const withSeal = await verify(`?seal=${encodeURIComponent(JSON.stringify(seal))}`);
      const forged = await verify(
        `?seal=${encodeURIComponent(JSON.stringify({ ...seal, signature: 'ab'.repeat(32) }))}`,
      );

      expect(plain.status).toBe(200);
      expect(plain.headers.get('chronicle-chain-broken')).toBeNull();
      const answer = (await plain.json()) as Record<string, any>;
      expect(answer).toEqual({ ok: true, checked: expect.any(Number), head: expect.any(Object) });
      expect(answer.checked).toBeGreaterThanOrEqual(6);
      expect(await withSeal.json()).toMatchObject({
        ok: true,
        seal: { position: seal.position, valid: true, problem: null },
      });
      expect(await forged.json()).toMatchObject({
        ok: false,
        seal: { valid: false, problem: 'the seal was not signed with this seal key' },
      });
      expect((await verify('?seal=not-a-seal')).status).toBe(400);
      expect((await verify('', member)).status).toBe(403);
      expect((await fetch(`${subject.url}/health/ready`)).status).toBe(200);
    } finally {
      await subject.destroy();
    }
  });
});

/** Customer 3's first event gets another name; its stored hash stays. */
async function editCustomerThree(dataDir: string): Promise<void> {
  if (E2E_BACKEND === 'embedded') {
    const db = new Database(join(dataDir, 'events.db'));
    try {
      db.exec('DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;');
      const changed = db
        .prepare(
          `UPDATE events SET data = json_set(data, '$.name', ?) WHERE stream = 'customer-3' AND revision = 0`,
        )
        .run(EDITED_NAME);
      expect(changed.changes).toBe(1);
    } finally {
      db.close();
    }
    return;
  }
  const [first] = (await esdbDoubleOf(dataDir)).log.stream('customer-3')!;
  const data = JSON.parse(Buffer.from(first.data).toString('utf8')) as Record<string, unknown>;
  (first as { data: Uint8Array }).data = Buffer.from(JSON.stringify({ ...data, name: EDITED_NAME }));
}
