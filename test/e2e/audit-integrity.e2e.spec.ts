import Database from 'better-sqlite3';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonLines, runCliProcess as cli } from './support/cli-process';
import { E2E_BACKEND, newDataDir } from './support/test-app';

/** The CLI's JSON answer and exit code. */
async function run(dataDir: string, ...args: string[]): Promise<{ code: number; json: Record<string, any> }> {
  const result = await cli(dataDir, ...args);
  const [json] = jsonLines(result.stdout);
  if (json === undefined) throw new Error(`no JSON from ${args.join(' ')}: ${result.stderr}`);
  return { code: result.code, json };
}

describe('audit verify and audit seal', () => {
  const dataDir = newDataDir();
  const sealFile = join(newDataDir(), 'seal.json');
  let head: number;

  beforeAll(async () => {
    const seeded = await cli(dataDir, 'customers', 'seed', '--count', '4');
    expect(seeded.code).toBe(0);
    const sealed = await run(dataDir, 'audit', 'seal');
    expect(sealed.code).toBe(0);
    writeFileSync(sealFile, JSON.stringify(sealed.json));
    head = Number(sealed.json.position.split(':')[0]);
  });

  it('verifies an untouched history, and against the seal kept of it', async () => {
    const plain = await run(dataDir, 'audit', 'verify');
    const sealed = await run(dataDir, 'audit', 'verify', '--seal', sealFile);

    expect(plain).toEqual({
      code: 0,
      json: {
        ok: true,
        scope: E2E_BACKEND === 'embedded' ? 'log' : 'stream',
        events: expect.any(Number),
        head: {
          position: expect.any(String),
          hash: expect.stringMatching(/^[0-9a-f]{64}$/),
          recordedAt: expect.any(String),
        },
        broken: null,
      },
    });
    expect(plain.json.events).toBeGreaterThanOrEqual(8);
    expect(sealed.code).toBe(0);
    // The seal's position, below the head: each verify records its own read first.
    expect(sealed.json.seal).toEqual({ position: String(head), valid: true, problem: null });
    expect(Number(plain.json.head.position)).toBeGreaterThan(head);
  });

  it('refuses a seal signed with another key', async () => {
    const { json } = await run(dataDir, 'audit', 'seal');
    const forged = join(newDataDir(), 'forged.json');
    writeFileSync(forged, JSON.stringify({ ...json, signature: 'ab'.repeat(32) }));

    const result = await run(dataDir, 'audit', 'verify', '--seal', forged);

    expect(result.code).toBe(1);
    expect(result.json).toMatchObject({
      ok: false,
      broken: null,
      seal: { valid: false, problem: 'the seal was not signed with this seal key' },
    });
  });

  // The attacks on events.db itself: someone with the file drops the triggers first.
  (E2E_BACKEND === 'embedded' ? describe : describe.skip)('on an events.db edited with sqlite', () => {
    /** A copy of the data directory (secrets and seal key too), edited by `sql`. */
    function tampered(sql: string): string {
      const copy = newDataDir();
      cpSync(dataDir, copy, { recursive: true });
      const db = new Database(join(copy, 'events.db'));
      try {
        db.exec('DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;');
        db.exec(sql);
      } finally {
        db.close();
      }
      return copy;
    }

    it.each([
      [
        'an UPDATE of one event’s actor',
        `UPDATE events SET metadata = json_set(metadata, '$.actor', 'admin') WHERE position = 3`,
        '3',
        'was changed, inserted or removed',
      ],
      [
        'a DELETE of one event',
        'DELETE FROM events WHERE position = 4',
        '5',
        'was changed, inserted or removed',
      ],
      [
        'an UPDATE of one event’s recorded time',
        `UPDATE events SET recorded_at = '2026-03-01T00:00:00.000Z' WHERE position = 6`,
        '6',
        'is before its predecessor',
      ],
      [
        'an INSERT before the first event',
        `INSERT INTO events (position, id, stream, revision, type, data, metadata, recorded_at, hash)
           SELECT 0, 'forged-id', stream, 99, type, data, metadata, recorded_at, hash FROM events WHERE position = 2`,
        '0',
        'was changed, inserted or removed',
      ],
    ])('names the broken position after %s', async (_, sql, position, reason) => {
      const copy = tampered(sql);

      const result = await run(copy, 'audit', 'verify');

      expect(result.code).toBe(1);
      expect(result.json).toMatchObject({ ok: false, broken: { position } });
      expect(result.json.broken.reason).toContain(reason);
    });

    /** The copy's last position: each CLI read of the history records itself first, so the head moves. */
    function headOf(copy: string): number {
      const db = new Database(join(copy, 'events.db'), { readonly: true });
      try {
        return db.prepare<[], number>('SELECT max(position) FROM events').pluck().get()!;
      } finally {
        db.close();
      }
    }

    it('fails a filtered export whose history breaks before its head, after its manifest says where', async () => {
      const copy = tampered(
        `UPDATE events SET metadata = json_set(metadata, '$.actor', 'admin') WHERE position = 3`,
      );

      const exported = await cli(copy, 'audit', '--type', 'CustomerRegistered.v1');

      expect(exported.code).toBe(1);
      const [manifest] = jsonLines(exported.stdout).slice(-2);
      expect(manifest.manifest).toMatchObject({
        head: String(headOf(copy)),
        count: 4,
        chain: { ok: false, head: { position: '2' }, broken: { position: '3' } },
      });
      expect(jsonLines(exported.stderr)).toEqual([
        { error: 'chain-broken', message: expect.stringContaining('breaks at position 3') },
      ]);
    });

    it('names an INSERT after the head', async () => {
      const copy = tampered(
        `INSERT INTO events (position, id, stream, revision, type, data, metadata, recorded_at, hash)
           SELECT position + 1, 'forged-id', 'user-forged', 0, type, data, metadata, recorded_at, hash
           FROM events ORDER BY position DESC LIMIT 1`,
      );
      const forged = headOf(copy);

      const result = await run(copy, 'audit', 'verify');

      expect(result.json).toMatchObject({
        ok: false,
        broken: { position: String(forged), stream: 'user-forged' },
      });
    });

    it('catches a history cut short only with a kept seal: the rest of the chain still holds', async () => {
      const copy = tampered(`DELETE FROM events WHERE position > ${head - 2}`);

      const plain = await run(copy, 'audit', 'verify');
      const sealed = await run(copy, 'audit', 'verify', '--seal', sealFile);

      expect(plain).toMatchObject({ code: 0, json: { ok: true, broken: null } });
      expect(sealed.code).toBe(1);
      expect(sealed.json).toMatchObject({ ok: false, broken: null, seal: { valid: false } });
      // The verify runs record themselves after the cut: the sealed position holds another event now.
      expect(sealed.json.seal.problem).toMatch(
        new RegExp(`the (history up to the )?sealed position ${head} is not`),
      );
    });

    it('refuses UPDATE and DELETE while the triggers stand', () => {
      const db = new Database(join(dataDir, 'events.db'));
      try {
        expect(() => db.exec('UPDATE events SET data = data WHERE position = 1')).toThrow('append-only');
        expect(() => db.exec('DELETE FROM events WHERE position = 1')).toThrow('append-only');
      } finally {
        db.close();
      }
    });
  });
});
