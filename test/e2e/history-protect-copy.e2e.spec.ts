import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EsdbDouble, startEsdbDouble } from '../doubles/esdb/esdb-double';
import { backendEnv, esdbDoubleOf } from './support/backend';
import { byteScanner } from './support/byte-scan';
import { runCliJson } from './support/cli-process';
import { historyToProtect } from './support/older-build';
import { E2E_BACKEND, sendAs, startTestApp, TestAccount } from './support/test-app';

/** Every event of an EventStoreDB double as it stores them: data and metadata bytes. */
function scanLog(double: EsdbDouble, texts: string[]): string[] {
  const { scan, hits } = byteScanner(texts);
  for (const event of double.log.events()) {
    scan(`${event.stream}@${event.revision}`, Buffer.concat([event.data, event.customMetadata]));
  }
  return hits;
}

/**
 * `history protect --to` on the production shape: the EventStoreDB history of a deployment written
 * partly before personal values were encrypted is copied, protected, into a second database; the
 * data keys made on the way go to the deployment's MongoDB, which the copy is served with.
 */
// Several CLI processes per test: a CI run on a busy machine went past jest's default 30 s
// (2026-11-28, when they still started from source). A ceiling, not a time.
jest.setTimeout(90_000);

(E2E_BACKEND === 'doubles' ? describe : describe.skip)(
  'history protect --to: an EventStoreDB history copied, protected',
  () => {
    const customerId = 9_001;
    // Texts no other test data holds, so that a scan finds only these.
    const names = ['Copied Wombat-Qz', 'Renamed Wombat-Qz', 'Erased Numbat-Qz', 'Customer Quokka-Qz'];
    const address = 'quokka-qz@example.com';
    const history = historyToProtect(
      { name: names[0], renamed: names[1], erasedName: names[2] },
      { customerId, name: names[3], email: address },
    );
    const { dataDir, keptDir, userId, erasedId } = history;
    let target: EsdbDouble;
    let targetEnv: Record<string, string>;
    let admin: TestAccount;
    const served: Record<string, unknown> = {};

    const cli = (env: Record<string, string>, ...args: string[]) => runCliJson({ dataDir, env }, ...args);
    const onSource = (...args: string[]) => cli({}, ...args);
    const onTarget = (...args: string[]) => cli(targetEnv, ...args);

    /** What the API serves of the people and customers, to compare the copy's with the source's. */
    async function readAll(url: string): Promise<Record<string, unknown>> {
      const read = async (path: string) => {
        const response = await sendAs(admin, `${url}${path}`, 'GET');
        return { status: response.status, body: await response.json() };
      };
      return {
        user: await read(`/users/${userId}`),
        erased: (await read(`/users/${erasedId}`)).status,
        customer: await read(`/customers/${customerId}`),
        users: await read('/users'),
        customers: await read(`/customers?gt=${customerId - 1}&lt=${customerId + 1}`),
      };
    }

    beforeAll(async () => {
      target = await startEsdbDouble();
      targetEnv = { EVENTSTORE_URL: target.connectionString };
      await history.setUp();
      // And what the current build writes, encrypted: an administrator.
      const source = await startTestApp({ dataDir });
      try {
        admin = await source.createAccount({ admin: true });
        await source.settle();
        Object.assign(served, await readAll(source.url));
      } finally {
        await source.stop();
      }
    });

    afterAll(async () => {
      await target.stop();
    });

    it('refuses the source itself as the target', async () => {
      const { EVENTSTORE_URL } = await backendEnv(dataDir);

      const refused = await onSource('history', 'protect', '--to', EVENTSTORE_URL);

      expect(refused).toEqual({
        code: 1,
        json: { error: 'invalid-target', message: expect.stringContaining('names the source itself') },
      });
    });

    it('copies the history protected: no byte of a name or address in the new database; the old seal verifies on it', async () => {
      const sealed = await onSource('audit', 'seal');
      expect(sealed.code).toBe(0);
      writeFileSync(join(keptDir, 'seal.json'), JSON.stringify(sealed.json));

      const result = await onSource('history', 'protect', '--to', target.connectionString);

      expect(result.code).toBe(0);
      expect(result.json).toEqual({
        oldHead: {
          position: sealed.json.position,
          hash: sealed.json.hash,
          recordedAt: sealed.json.recordedAt,
        },
        newHead: { position: expect.any(String), hash: expect.any(String), recordedAt: expect.any(String) },
        firstChanged: expect.any(String),
        // The three plaintext events of the user and the customer; the erased user's one made null.
        events: 4,
        erasedSubjectEvents: 1,
        copied: expect.any(Number),
        resumed: 0,
        position: expect.any(String),
      });
      // Run again: the copy is complete, nothing is written.
      const copied = target.log.events().length;
      expect(await onSource('history', 'protect', '--to', target.connectionString)).toEqual({
        code: 0,
        json: { events: 0, position: null },
      });
      expect(target.log.events()).toHaveLength(copied);
      expect(scanLog(target, [...names, address])).toEqual([]);
      // The scan finds what is there: the old database still holds them all.
      expect(scanLog(await esdbDoubleOf(dataDir), [names[0], address]).length).toBeGreaterThan(0);

      expect(await onTarget('audit', 'verify')).toMatchObject({ code: 0, json: { ok: true, broken: null } });
      const verified = await onTarget('audit', 'verify', '--seal', join(keptDir, 'seal.json'));
      expect(verified.code).toBe(0);
      expect(verified.json.seal).toEqual({
        position: sealed.json.position,
        valid: true,
        problem: null,
        protection: result.json.position,
      });
      // The seal holds on the old database as it is, too. The audit read is recorded there: the source
      // has moved on, and the finished copy is of an older head.
      expect((await onSource('audit', 'verify', '--seal', join(keptDir, 'seal.json'))).code).toBe(0);
      expect(await onSource('history', 'protect', '--to', target.connectionString)).toEqual({
        code: 1,
        json: {
          error: 'target-not-empty',
          message: expect.stringContaining('finished copy of an older head'),
        },
      });
    });

    it('serves the same users and customers from the copy, once its read models are rebuilt', async () => {
      expect((await onTarget('projections', 'rebuild')).code).toBe(0);
      const copy = await startTestApp({ dataDir, env: targetEnv });
      try {
        await copy.settle();
        const read = await readAll(copy.url);

        expect(read).toEqual(served);
        expect(read).toMatchObject({
          user: { status: 200, body: { id: userId, name: names[1], age: 41 } },
          erased: 410,
          customer: { status: 200, body: { name: names[3], email: address } },
        });
      } finally {
        await copy.stop();
      }
    });
  },
);
