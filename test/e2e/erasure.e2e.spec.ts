import { copyFileSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { MongoClient } from 'mongodb';
import { EJSON } from 'bson';
import { EventStore } from '@chronicle/event-store';
import { jsonLines, runCliProcess } from './support/cli-process';
import {
  backendEnv,
  E2E_BACKEND,
  issueToken,
  sendAs,
  startTestApp,
  TestAccount,
  TestApp,
} from './support/test-app';
import { eventually } from './support/eventually';
import { rawStore } from './support/backend';
import { byteScanner, filesUnder } from './support/byte-scan';

describe('erasure: DELETE /users/{id} and DELETE /customers/{id}', () => {
  let subject: TestApp;
  let admin: TestAccount;
  let auditor: TestAccount;
  // Names and addresses no other test data holds, so that a scan finds only these.
  const personName = 'Zyxwa Erasable-Quokka';
  const renamed = 'Zyxwa Renamed-Quokka';
  const customerName = 'Qwertz Forgettable-Numbat';
  const customerEmail = 'qwertz.numbat@erasure.example';

  const send = (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, as: TestAccount = admin) =>
    sendAs(as, `${subject.url}${path}`, method, body);
  const remove = (path: string, authorization: string) =>
    fetch(`${subject.url}${path}`, { method: 'DELETE', headers: { authorization } });
  const basicOf = (account: TestAccount) =>
    `Basic ${Buffer.from(`${account.email}:${account.password}`).toString('base64')}`;

  beforeAll(async () => {
    subject = await startTestApp();
    [admin, auditor] = await Promise.all([
      subject.createAccount({ admin: true }),
      subject.createAccount({ auditor: true }),
    ]);
  });
  afterAll(() => subject.destroy());

  it('erases a person: 410 on every read and change, no token or login works, the address is free, the audit keeps the events without the values', async () => {
    const person = await subject.createAccount({ name: personName, age: 41 });
    const token = await issueToken(subject.url, person);
    expect((await send('PATCH', `/users/${person.userId}`, { name: renamed }, person)).status).toBe(200);
    // A reset e-mail kept in the outbox names the address.
    expect(
      (
        await fetch(`${subject.url}/api/v1/account/password`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: person.email }),
        })
      ).status,
    ).toBe(202);
    await subject.settle();
    const before = Number((await send('GET', '/users?maxpagesize=1')).headers.get('x-total-count'));
    const bearer = { authorization: `Bearer ${token}` };
    // The e-mail is in the outbox before the erasure, so that the erasure must remove it.
    await eventually('the reset e-mail is in the outbox', () =>
      filesUnder(subject.dataDir).some(
        (file) => file.endsWith('.eml') && readFileSync(file, 'utf8').includes(person.email),
      ),
    );
    // A copy as the previous release named the outbox's files, `<message id>.eml`: found and gone too.
    const kept = filesUnder(subject.dataDir).find(
      (file) => file.endsWith('.eml') && readFileSync(file, 'utf8').includes(person.email),
    )!;
    copyFileSync(kept, join(dirname(kept), basename(kept).slice(basename(kept).indexOf('@') + 1)));
    expect((await fetch(`${subject.url}/users/${person.userId}`, { headers: bearer })).status).toBe(200);

    expect((await remove(`/users/${person.userId}`, basicOf(person))).status).toBe(403);
    const erased = await remove(`/users/${person.userId}`, basicOf(admin));
    expect(erased.status).toBe(204);

    for (const path of [
      `/users/${person.userId}`,
      `/users/${person.userId}?asOf=2020-01-01T00:00:00Z`,
      `/users/${person.userId}/export`,
    ]) {
      const response = await send('GET', path);
      expect(response.status).toBe(410);
      expect(await response.json()).toMatchObject({ type: 'erased', status: 410 });
    }
    const patched = await send('PATCH', `/users/${person.userId}`, { age: 50 });
    expect(patched.status).toBe(410);
    await eventually(
      'the bearer token stops working',
      async () => (await fetch(`${subject.url}/users/${person.userId}`, { headers: bearer })).status === 401,
    );
    expect((await send('GET', `/users/${person.userId}`, undefined, person)).status).toBe(401);
    await subject.settle();
    const after = await send('GET', '/users?maxpagesize=1000');
    expect(Number(after.headers.get('x-total-count'))).toBe(before - 1);
    expect(((await after.json()) as Array<{ id: string }>).map((user) => user.id)).not.toContain(
      person.userId,
    );

    // Erasing again is no error; an unknown user is.
    expect((await remove(`/users/${person.userId}`, basicOf(admin))).status).toBe(204);
    expect((await remove('/users/00000000-0000-4000-8000-000000000000', basicOf(admin))).status).toBe(404);

    const audit = (await (
      await fetch(`${subject.url}/api/v1/audit/events?stream=user-${person.userId}`, {
        headers: { authorization: basicOf(auditor) },
      })
    ).json()) as Array<Record<string, any>>;
    expect(audit.map((record) => [record.type, record.erased])).toEqual([
      ['UserRegistered.v2', true],
      ['UserPatched.v1', true],
      ['SubjectErased.v1', undefined],
    ]);
    expect(audit[0].data).toMatchObject({ userId: person.userId, name: null, age: null });
    expect(audit[1].data.changes).toEqual({ name: null });
    expect(audit[2].data).toEqual({
      subject: `user-${person.userId}`,
      kind: 'user',
      erasedAt: expect.any(String),
    });
    expect(audit[2].actor).toBe(admin.accountId);
    const verified = await fetch(`${subject.url}/api/v1/audit/verify`, {
      headers: { authorization: basicOf(auditor) },
    });
    expect(await verified.json()).toMatchObject({ ok: true });

    await expectNoByteOf([personName, renamed, person.email]);

    // The address may open a new account (whose invitation then names it again).
    const again = await send('POST', '/api/v1/accounts', {
      email: person.email,
      name: 'Someone Else',
      age: 30,
    });
    expect(again.status).toBe(201);
  });

  it('erases a customer: 410, out of the list and its count, and the CLI answers the first erasure', async () => {
    const created = await send('POST', '/customers', { name: customerName, email: customerEmail });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    await subject.settle();
    const total = async () =>
      Number((await send('GET', '/customers?maxpagesize=1')).headers.get('x-total-count'));
    const before = await total();

    expect((await remove(`/customers/${id}`, basicOf(admin))).status).toBe(204);
    expect((await send('GET', `/customers/${id}`)).status).toBe(410);
    expect((await send('GET', `/customers/${id}/export`)).status).toBe(410);
    expect((await send('PATCH', `/customers/${id}`, { name: 'Back' })).status).toBe(410);
    await subject.settle();
    expect(await total()).toBe(before - 1);
    expect((await remove('/customers/999999', basicOf(admin))).status).toBe(404);

    const cli = await runCliProcess(subject.dataDir, 'erase', '--customer', String(id));
    expect(cli.code).toBe(0);
    expect(jsonLines(cli.stdout)).toEqual([
      { subject: `customer-${id}`, erasedAt: expect.any(String), position: expect.any(String) },
    ]);
    const usage = await runCliProcess(subject.dataDir, 'erase');
    expect(usage.code).toBe(2);

    await expectNoByteOf([customerName, customerEmail]);
  });

  it('takes PATCH and DELETE of the same user in parallel, 100 times: no 5xx, and no name of theirs left', async () => {
    const names: string[] = [];
    const statuses = new Map<string, number>();
    const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
    for (let round = 0; round < 100; round += 10) {
      const people = await Promise.all(
        Array.from({ length: 10 }, (_, i) => subject.createAccount({ name: `Pqrsx Racer-${round + i}` })),
      );
      await Promise.all(
        people.map(async (person, i) => {
          const patchedName = `Pqrsx Patched-${round + i}`;
          names.push(`Pqrsx Racer-${round + i}`, patchedName);
          const [patched, erased] = await Promise.all([
            send('PATCH', `/users/${person.userId}`, { name: patchedName }),
            remove(`/users/${person.userId}`, basicOf(admin)),
          ]);
          count(`PATCH ${patched.status}`);
          count(`DELETE ${erased.status}`);
          await Promise.all([patched.arrayBuffer(), erased.arrayBuffer()]);
          expect((await send('GET', `/users/${person.userId}`)).status).toBe(410);
        }),
      );
    }
    // Whichever came first, the user ends erased: a PATCH before the erasure answers 200, after it 410.
    expect([...statuses.keys()].sort()).toEqual(expect.arrayContaining(['DELETE 204']));
    for (const key of statuses.keys()) expect(key).toMatch(/^(PATCH (200|410)|DELETE 204)$/);
    await subject.settle();
    await expectNoByteOf(names);
  });

  /**
   * No byte of `texts` anywhere the service keeps data: every file under DATA_DIR (events, keys,
   * the read models' snapshot, the outbox, limits) after a clean stop, and on the production shape
   * every document of the MongoDB double and every event of the EventStoreDB double as stored.
   */
  async function expectNoByteOf(texts: string[]): Promise<void> {
    const { scan, scanFilesUnder, hits } = byteScanner(texts);
    const { MONGODB_URI } = await backendEnv(subject.dataDir);
    if (E2E_BACKEND === 'doubles' && MONGODB_URI) {
      const client = await MongoClient.connect(MONGODB_URI);
      try {
        const db = client.db();
        for (const { name } of await db.listCollections().toArray()) {
          for (const document of await db.collection(name).find({}).toArray()) {
            scan(`mongodb ${name}`, Buffer.from(EJSON.stringify(document)));
          }
        }
      } finally {
        await client.close();
      }
      const raw: EventStore = await rawStore(subject.dataDir);
      try {
        for await (const event of raw.readAll())
          scan(`event ${event.stream}@${event.revision}`, Buffer.from(JSON.stringify(event.data)));
      } finally {
        await raw.close();
      }
    }
    scanFilesUnder(subject.dataDir);
    expect(hits).toEqual([]);
  }
});
