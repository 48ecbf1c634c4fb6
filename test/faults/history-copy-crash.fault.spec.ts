import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EsdbEventStore } from '@chronicle/event-store/esdb';
import { EsdbDouble, startEsdbDouble } from '../doubles/esdb/esdb-double';
import { MongoDouble, startMongoDouble } from '../doubles/mongo/mongo-double';
import { byteScanner } from '../e2e/support/byte-scan';
import { jsonLines, runCliWith } from '../e2e/support/cli-process';
import { newDataDir } from '../e2e/support/test-app';

/** Kills `history protect --to` with SIGKILL after this many appends to the new database. */
const KILL_DURING_COPY = join(__dirname, 'support', 'kill-during-history-copy.preload.ts');
const NAME = 'Crashy Copywombat-Zq';
const USERS = 30;
const KILLED_AFTER = 12;

/**
 * `history protect --to` cut by a crash: the new database holds the first events of the source, in
 * order, and no record, so that its check against the seal fails (it does not pass for done); a
 * second run checks what is there, goes on after it, and records the whole copy once.
 */
describe('history protect --to killed in the middle of the copy', () => {
  const dataDir = newDataDir();
  let mongo: MongoDouble;
  let source: EsdbDouble;
  const targets: EsdbDouble[] = [];
  let seal: Record<string, any>;
  let sealFile: string;
  let env: Record<string, string>;
  const cli = async (extra: Record<string, string>, nodeOptions: string[], ...args: string[]) => {
    const result = await runCliWith({ dataDir, env: { ...env, ...extra }, nodeOptions }, ...args);
    return { ...result, json: jsonLines(result.stdout || result.stderr)[0] };
  };
  const onTarget = (target: EsdbDouble, ...args: string[]) =>
    cli({ EVENTSTORE_URL: target.connectionString }, [], ...args);
  const newTarget = async () => {
    const target = await startEsdbDouble();
    targets.push(target);
    return target;
  };
  const sourceIds = () => ours(source).map((event) => event.id);
  const ours = (double: EsdbDouble) => double.log.events().filter((event) => !event.stream.startsWith('$'));

  beforeAll(async () => {
    [mongo, source] = await Promise.all([startMongoDouble(), startEsdbDouble()]);
    const uri = new URL(mongo.uri);
    uri.pathname = '/history_copy';
    env = {
      EVENTSTORE_URL: source.connectionString,
      MONGODB_URI: uri.toString(),
      DATA_KEY_SECRET: randomBytes(32).toString('hex'),
    };
    // As a build from before personal values were encrypted wrote them: plaintext, one stream each.
    const raw = EsdbEventStore.connect(source.connectionString);
    try {
      for (let i = 0; i < USERS; i++) {
        const userId = randomUUID();
        const data = {
          userId,
          accountId: null,
          name: `${NAME} ${i}`,
          age: 30,
          createdon: '2020-01-01T00:00:00.000Z',
        };
        const metadata = {
          actor: 'system',
          correlationId: 'older',
          causationId: null,
          occurredAt: '2020-01-01T00:00:00.000Z',
        };
        await raw.append(
          `user-${userId}`,
          [{ id: randomUUID(), type: 'UserRegistered.v1', data, metadata }],
          'no_stream',
        );
      }
    } finally {
      await raw.close();
    }
    // The seal of the head before the copy.
    const sealed = await cli({}, [], 'audit', 'seal');
    expect(sealed.code).toBe(0);
    seal = sealed.json;
    sealFile = join(newDataDir(), 'seal.json');
    writeFileSync(sealFile, JSON.stringify(seal));
  });

  afterAll(async () => {
    await Promise.all([source, mongo, ...targets].map((double) => double?.stop()));
  });

  /** `history protect --to` into `target`, killed after KILLED_AFTER appends to it. */
  async function killedCopy(target: EsdbDouble): Promise<void> {
    const killed = await cli(
      { KILL_COPY_AFTER_APPENDS: String(KILLED_AFTER) },
      ['-r', KILL_DURING_COPY],
      'history',
      'protect',
      '--to',
      target.connectionString,
    );
    expect(killed.signal).toBe('SIGKILL');
    // The source's first events, in order, and no record of a finished copy.
    expect(ours(target).map((event) => event.id)).toEqual(sourceIds().slice(0, KILLED_AFTER));
  }

  it('leaves a prefix of the source; a second run resumes after it and records the whole copy once', async () => {
    const target = await newTarget();
    await killedCopy(target);

    const completed = await cli({}, [], 'history', 'protect', '--to', target.connectionString);

    expect(completed.code).toBe(0);
    expect(completed.json).toMatchObject({
      oldHead: { position: seal.position, hash: seal.hash },
      events: USERS,
      erasedSubjectEvents: 0,
      resumed: KILLED_AFTER,
      copied: sourceIds().length - KILLED_AFTER,
    });
    const copied = ours(target);
    const record = copied.at(-1)!;
    expect(copied.map((event) => event.id)).toEqual([...sourceIds(), record.id]);
    expect(record.type).toBe('HistoryProtected.v1');
    const { scan, hits } = byteScanner([NAME]);
    for (const event of copied)
      scan(`${event.stream}@${event.revision}`, Buffer.concat([event.data, event.customMetadata]));
    expect(hits).toEqual([]);
    expect(await onTarget(target, 'audit', 'verify', '--seal', sealFile)).toMatchObject({
      code: 0,
      json: { ok: true, broken: null, seal: { valid: true, protection: completed.json.position } },
    });
  });

  it('leaves a prefix that does not pass for done; once written to (an audit of it), a second run refuses it', async () => {
    const target = await newTarget();
    await killedCopy(target);

    const half = await onTarget(target, 'audit', 'verify', '--seal', sealFile);
    expect(half.code).toBe(1);
    expect(half.json.seal).toMatchObject({ valid: false });
    const audited = ours(target).length;

    const refused = await cli({}, [], 'history', 'protect', '--to', target.connectionString);

    expect(refused).toMatchObject({
      code: 1,
      json: { error: 'target-not-empty', message: expect.stringContaining('give a new, empty database') },
    });
    expect(ours(target)).toHaveLength(audited);
    expect(ours(target).map((event) => event.type)).not.toContain('HistoryProtected.v1');
  });
});
