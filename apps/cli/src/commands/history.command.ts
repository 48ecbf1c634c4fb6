import { Command } from 'commander';
import { protectionOf, protectionRecord, sealKey, toNewEvent } from '@chronicle/application';
import { BACKGROUND_HANDLERS, ChronicleConfig } from '@chronicle/config';
import { eventSchemaOf, HISTORY_PROTECTION_STREAM, HistoryProtected } from '@chronicle/domain';
import {
  copyHistory,
  DataKeyRing,
  EventStore,
  formatPosition,
  type HistoryRewrite,
  type HistoryRewriteSummary,
  openCheckpointStore,
  openDataKeyStore,
  PersonalDataEventStore,
  type PersonalFieldsOf,
  type Position,
  SqliteEventStore,
} from '@chronicle/event-store';
import { READ_MODELS_CHECKPOINT, runOnRunningServers } from '@chronicle/read-models';
import { MongoReadStore } from '@chronicle/read-models/mongo';
import { cliRun } from '../cli-run';
import { printJson } from '../output';

/** Why `history protect` did not run. */
export class HistoryProtectError extends Error {
  constructor(
    readonly code: 'not-embedded' | 'server-running' | 'no-source' | 'invalid-target',
    message: string,
  ) {
    super(message);
    this.name = 'HistoryProtectError';
  }
}

/** What `history protect` prints; a copy (`--to`) also says how many events this run copied. */
export type HistoryProtectResult = { events: 0; position: null } | HistoryProtectDone;

type HistoryProtectDone = { position: string; copied?: number; resumed?: number } & Omit<
  HistoryProtected['data'],
  'signature'
>;

/**
 * `history protect`, offline, once. On the embedded store every stored event whose personal values
 * are still plaintext gets them encrypted by the store's own write path (PersonalDataEventStore),
 * the chain is recomputed from the first changed event on, and HistoryProtected.v1 records the old
 * and the new heads, all in one transaction. With `to` (EVENTSTORE_URL set: EventStoreDB cannot
 * rewrite events) the history is copied so into that new database instead, the record appended
 * there last (copyHistory). A second run finds nothing to do and writes nothing.
 */
export async function protectHistory(
  config: ChronicleConfig,
  { to }: { to?: string } = {},
): Promise<HistoryProtectResult> {
  if (config.eventStoreUrl && to === undefined) {
    throw new HistoryProtectError(
      'not-embedded',
      'EVENTSTORE_URL is set: EventStoreDB cannot rewrite events. Copy the history into a new, empty database, ' +
        'protected: `history protect --to <its connection string>` (docs/operations.md, "Protecting an existing history")',
    );
  }
  if (!config.eventStoreUrl && to !== undefined) {
    throw new HistoryProtectError(
      'no-source',
      '--to copies an EventStoreDB history: set EVENTSTORE_URL to the database to copy (the embedded store is ' +
        'protected in place, without --to)',
    );
  }
  const running = await runOnRunningServers(config.dataDir, 'status');
  if (running.length > 0) {
    throw new HistoryProtectError(
      'server-running',
      `${running.length} server${running.length === 1 ? ' runs' : 's run'} on DATA_DIR (${config.dataDir}): ` +
        'stop every server and projector on it first; history protect rewrites the store offline',
    );
  }
  const keys = new DataKeyRing(await openDataKeyStore(config));
  const personal = (type: string) => eventSchemaOf(type)?.personal;
  const run = cliRun();
  const key = sealKey(config, true)!;
  const record = (summary: HistoryRewriteSummary) => ({
    stream: HISTORY_PROTECTION_STREAM,
    event: toNewEvent(protectionRecord(summary, key), run, new Date()),
  });
  if (to !== undefined) return copyProtected(config, to, keys, personal, record);
  const adapter = SqliteEventStore.open(config.dataDir);
  const store = new PersonalDataEventStore(adapter, keys, personal);
  try {
    const done = await adapter.rewriteHistory({ rewrite: (events) => store.protectStored(events), record });
    return done === null ? { events: 0, position: null } : printed(done);
  } finally {
    await store.close();
  }
}

/** EventStoreDB: the history of `from` copied, protected, into the empty database `to`. */
async function copyProtected(
  config: ChronicleConfig,
  to: string,
  keys: DataKeyRing,
  personal: PersonalFieldsOf,
  record: HistoryRewrite['record'],
): Promise<HistoryProtectResult> {
  const from = config.eventStoreUrl!;
  if (to === from) {
    await keys.close();
    throw new HistoryProtectError(
      'invalid-target',
      '--to names the source itself (EVENTSTORE_URL): give a new, empty database',
    );
  }
  const { EsdbEventStore, InvalidConnectionStringError } = await import('@chronicle/event-store/esdb');
  let target: EventStore;
  try {
    target = EsdbEventStore.connect(to);
  } catch (error) {
    await keys.close();
    if (error instanceof InvalidConnectionStringError)
      throw new HistoryProtectError('invalid-target', `--to: ${error.message}`);
    throw error;
  }
  const source = EsdbEventStore.connect(from);
  // Only its protectStored is used: the keys, and the encryption of the append path.
  const store = new PersonalDataEventStore(target, keys, personal);
  try {
    const done = await copyHistory(
      source,
      target,
      { rewrite: (events) => store.protectStored(events), record },
      'HistoryProtected.v1',
      () => replayOnCopy(config),
    );
    if (done === null) return { events: 0, position: null };
    return { ...printed(done), copied: done.copied, resumed: done.resumed };
  } finally {
    await Promise.all([store.close(), source.close()]);
  }
}

/**
 * The copy's positions are not the source's. The processors that keep a checkpoint and state
 * beside it (the sessions, the saga) start again from its beginning, as their handlers allow. The
 * shared read models' checkpoint is put beyond every log, so that the projector refuses to start
 * on them (never resuming at a position that means another event here) until `projections
 * rebuild` has made them from the copy. Before the copy is recorded as done: never on a database
 * already in use.
 */
async function replayOnCopy(config: ChronicleConfig): Promise<void> {
  const checkpoints = await openCheckpointStore(config);
  try {
    for (const handler of BACKGROUND_HANDLERS) {
      if (handler !== READ_MODELS_CHECKPOINT) await checkpoints.reset(handler);
    }
  } finally {
    await checkpoints.close();
  }
  if (config.mongodbUri === null) return;
  const readModels = await MongoReadStore.connect(config.mongodbUri);
  try {
    await readModels.applyBatch([], { projection: READ_MODELS_CHECKPOINT, position: BEYOND_EVERY_LOG });
  } finally {
    await readModels.close();
  }
}

/** The highest position a checkpoint can name (2^63 - 1): past the end of any log. */
const BEYOND_EVERY_LOG = { commit: 2n ** 63n - 1n, prepare: 2n ** 63n - 1n };

function printed(done: HistoryRewriteSummary & { recorded: Position }): HistoryProtectDone {
  return { ...protectionOf(done), position: formatPosition(done.recorded) };
}

export function registerHistoryCommands(program: Command, config: () => ChronicleConfig): void {
  const history = program.command('history').description('The stored event history itself');
  history
    .command('protect')
    .description(
      'Offline, once: encrypt the personal values that events written before they were encrypted hold in ' +
        'plaintext (those of erased subjects become null), re-chain the history, and record the old and the new ' +
        'head in HistoryProtected.v1, so that a seal taken before can be checked. The embedded store is ' +
        'rewritten in place; EventStoreDB (EVENTSTORE_URL) is copied into the new, empty database --to names',
    )
    .option('--to <connection-string>', 'EventStoreDB: the new, empty database the protected copy goes to')
    .action(async (options: { to?: string }) => {
      printJson(await protectHistory(config(), options));
    });
}
