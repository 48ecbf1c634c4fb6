import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rawStore } from './support/backend';
import { jsonLines, runCliJson, runCliProcess as cli } from './support/cli-process';
import { historyToProtect } from './support/older-build';
import { E2E_BACKEND, newDataDir, sendAs, startTestApp } from './support/test-app';

/** The forms a value could be kept in: as text, as JSON-escaped text, and as base64. */
const spellings = (text: string): Buffer[] => [
  Buffer.from(text, 'utf8'),
  Buffer.from(JSON.stringify(text).slice(1, -1), 'utf8'),
  Buffer.from(Buffer.from(text, 'utf8').toString('base64').slice(0, -4), 'utf8'),
];

const run = (dataDir: string, ...args: string[]) => runCliJson({ dataDir }, ...args);

(E2E_BACKEND === 'embedded' ? describe : describe.skip)(
  'history protect on a store written before encryption',
  () => {
    // Names no other test data holds, so that a scan finds only these.
    const names = ['Plaintext Wombat-Xq', 'Renamed Wombat-Xq', 'Erased Numbat-Xq'];
    const history = historyToProtect({ name: names[0], renamed: names[1], erasedName: names[2] });
    const { dataDir, keptDir, userId, erasedId } = history;
    const eventsDbBytes = () =>
      Buffer.concat(
        readdirSync(dataDir)
          .filter((file) => file.startsWith('events.db'))
          .map((file) => readFileSync(join(dataDir, file))),
      );

    beforeAll(async () => {
      // A seal kept long before the protect; one user erased with the build that encrypts.
      await history.setUp(async () => {
        const early = await run(dataDir, 'audit', 'seal');
        expect(early.code).toBe(0);
        writeFileSync(join(keptDir, 'early-seal.json'), JSON.stringify(early.json));
      });
      const receipt = await run(dataDir, 'audit', 'receipt', '--subject', `user-${erasedId}`);
      expect(receipt.code).toBe(0);
      writeFileSync(join(keptDir, 'receipt.json'), JSON.stringify(receipt.json));
    });

    it('refuses while a server runs on the store', async () => {
      const server = await startTestApp({ dataDir });
      try {
        const refused = await run(dataDir, 'history', 'protect');
        expect(refused.code).toBe(1);
        expect(refused.json).toEqual({
          error: 'server-running',
          message: expect.stringContaining('stop every server'),
        });
      } finally {
        await server.stop();
      }
      expect(eventsDbBytes().includes(Buffer.from(names[0]))).toBe(true);
    });

    it('encrypts the past values, re-chains, records both heads; no byte of them is left in events.db', async () => {
      // A seal of the head just before the protect: the head the protect records as old.
      const sealed = await run(dataDir, 'audit', 'seal');
      writeFileSync(join(keptDir, 'seal.json'), JSON.stringify(sealed.json));

      const result = await run(dataDir, 'history', 'protect');

      expect(result.code).toBe(0);
      expect(result.json).toEqual({
        oldHead: {
          position: sealed.json.position,
          hash: sealed.json.hash,
          recordedAt: sealed.json.recordedAt,
        },
        newHead: {
          position: sealed.json.position,
          hash: expect.not.stringMatching(sealed.json.hash),
          recordedAt: sealed.json.recordedAt,
        },
        firstChanged: '1',
        events: 3,
        erasedSubjectEvents: 1,
        position: expect.any(String),
      });
      const hits = names.flatMap((name) =>
        spellings(name)
          .filter((spelling) => eventsDbBytes().includes(spelling))
          .map(() => name),
      );
      expect(hits).toEqual([]);

      const again = await run(dataDir, 'history', 'protect');
      expect(again).toEqual({ code: 0, json: { events: 0, position: null } });

      const record = jsonLines((await cli(dataDir, 'audit', '--type', 'HistoryProtected.v1')).stdout)[0];
      expect(record).toMatchObject({
        stream: 'historyprotection',
        actor: expect.stringMatching(/^cli:/),
        data: { oldHead: result.json.oldHead, newHead: result.json.newHead, events: 3 },
      });
    });

    it('verifies afterwards: the chain, a seal of the old head, and names how to check an older seal', async () => {
      const plain = await run(dataDir, 'audit', 'verify');
      expect(plain.json).toMatchObject({ ok: true, broken: null });

      const sealed = await run(dataDir, 'audit', 'verify', '--seal', join(keptDir, 'seal.json'));
      expect(sealed.code).toBe(0);
      expect(sealed.json.seal).toEqual({
        position: expect.any(String),
        valid: true,
        problem: null,
        protection: expect.any(String),
      });

      const early = await run(dataDir, 'audit', 'verify', '--seal', join(keptDir, 'early-seal.json'));
      expect(early.code).toBe(1);
      expect(early.json).toMatchObject({ broken: null, seal: { valid: false } });
      expect(early.json.seal.problem).toContain(
        'the seal was taken before history protect re-chained the history',
      );
      expect(early.json.seal.problem).toContain('on a backup taken before the protect');

      // A receipt given before: its hash is the old one, which verify explains; a new one verifies.
      const before = await run(
        dataDir,
        'audit',
        'verify-receipt',
        '--receipt',
        join(keptDir, 'receipt.json'),
      );
      expect(before.code).toBe(1);
      expect(before.json.problem).toContain('was re-chained by history protect');
      const renewed = await run(dataDir, 'audit', 'receipt', '--subject', `user-${erasedId}`);
      writeFileSync(join(keptDir, 'renewed.json'), JSON.stringify(renewed.json));
      const after = await run(dataDir, 'audit', 'verify-receipt', '--receipt', join(keptDir, 'renewed.json'));
      expect(after).toMatchObject({ code: 0, json: { ok: true } });
    });

    it('reads the values back through the API, and the erased person stays erased', async () => {
      const server = await startTestApp({ dataDir });
      try {
        const admin = await server.createAccount({ admin: true });
        await server.settle();
        const user = await sendAs(admin, `${server.url}/users/${userId}`, 'GET');
        expect(user.status).toBe(200);
        expect(await user.json()).toMatchObject({ id: userId, name: names[1], age: 41 });
        expect((await sendAs(admin, `${server.url}/users/${erasedId}`, 'GET')).status).toBe(410);
        // The API's verify says the same of the seal of the old head, as its OpenAPI document describes.
        const seal = encodeURIComponent(readFileSync(join(keptDir, 'seal.json'), 'utf8'));
        const verified = await sendAs(admin, `${server.url}/api/v1/audit/verify?seal=${seal}`, 'GET');
        expect(verified.status).toBe(200);
        expect(await verified.json()).toMatchObject({
          ok: true,
          seal: { valid: true, problem: null, protection: expect.any(String) },
        });
      } finally {
        await server.stop();
      }
      const raw = await rawStore(dataDir);
      try {
        const stored = await raw.readStream(`user-${userId}`);
        expect(stored.map((event) => event.metadata.personalData)).toEqual(['encrypted', 'encrypted']);
        expect(stored[0].data.name).toMatch(/^p1\./);
        expect((await raw.readStream(`user-${erasedId}`))[0]).toMatchObject({
          data: { name: null, age: null },
          metadata: { personalData: 'erased' },
        });
      } finally {
        await raw.close();
      }
    });
  },
);

(E2E_BACKEND === 'doubles' ? describe : describe.skip)('history protect on EventStoreDB', () => {
  it('refuses, naming the copy procedure: EventStoreDB cannot rewrite events', async () => {
    const dataDir = newDataDir();

    const result = await run(dataDir, 'history', 'protect');

    expect(result.code).toBe(1);
    expect(result.json).toEqual({
      error: 'not-embedded',
      message: expect.stringContaining('EventStoreDB cannot rewrite events'),
    });
  });
});
