import { Command } from 'commander';
import { sealKey, signProtection, toNewEvent } from '@chronicle/application';
import { ChronicleConfig } from '@chronicle/config';
import { eventSchemaOf, HISTORY_PROTECTION_STREAM, HistoryProtected } from '@chronicle/domain';
import {
  DataKeyRing,
  formatPosition,
  openDataKeyStore,
  PersonalDataEventStore,
  SqliteEventStore,
} from '@chronicle/event-store';
import { runOnRunningServers } from '@chronicle/read-models';
import { cliRun } from '../cli-run';
import { printJson } from '../output';

/** Why `history protect` did not run. */
export class HistoryProtectError extends Error {
  constructor(
    readonly code: 'not-embedded' | 'server-running',
    message: string,
  ) {
    super(message);
    this.name = 'HistoryProtectError';
  }
}

/** What `history protect` prints. */
export type HistoryProtectResult =
  { events: 0; position: null } | ({ position: string } & Omit<HistoryProtected['data'], 'signature'>);

/**
 * `history protect`, on the embedded store, offline: every stored event whose personal values are
 * still plaintext gets them encrypted by the store's own write path (PersonalDataEventStore), the
 * chain is recomputed from the first changed event on, and HistoryProtected.v1 records the old and
 * the new heads, all in one transaction. A second run finds nothing to do and writes nothing.
 */
export async function protectHistory(config: ChronicleConfig): Promise<HistoryProtectResult> {
  if (config.eventStoreUrl) {
    throw new HistoryProtectError(
      'not-embedded',
      'EVENTSTORE_URL is set: EventStoreDB cannot rewrite events. Copy the history into a new database, ' +
        'protected, as docs/operations.md ("Protecting an existing history") describes',
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
  const adapter = SqliteEventStore.open(config.dataDir);
  const store = new PersonalDataEventStore(
    adapter,
    new DataKeyRing(await openDataKeyStore(config)),
    (type) => eventSchemaOf(type)?.personal,
  );
  try {
    let erasedSubjectEvents = 0;
    const run = cliRun();
    const key = sealKey(config, true)!;
    const done = await adapter.rewriteHistory({
      rewrite: async (events) => {
        const rewritten = await store.protectStored(events);
        erasedSubjectEvents += rewritten.filter((event) => event?.metadata.personalData === 'erased').length;
        return rewritten;
      },
      record: ({ oldHead, newHead, firstChanged, changed }) => {
        const recorded: HistoryProtected = {
          type: 'HistoryProtected.v1',
          data: {
            oldHead,
            newHead,
            firstChanged,
            events: changed,
            erasedSubjectEvents,
            signature: signProtection(oldHead, newHead, key),
          },
        };
        return { stream: HISTORY_PROTECTION_STREAM, event: toNewEvent(recorded, run, new Date()) };
      },
    });
    if (done === null) return { events: 0, position: null };
    const { oldHead, newHead, firstChanged, changed, recorded } = done;
    return {
      oldHead,
      newHead,
      firstChanged,
      events: changed,
      erasedSubjectEvents,
      position: formatPosition(recorded),
    };
  } finally {
    await store.close();
  }
}

export function registerHistoryCommands(program: Command, config: () => ChronicleConfig): void {
  const history = program.command('history').description('The stored event history itself');
  history
    .command('protect')
    .description(
      'Offline, once, on the embedded store: encrypt the personal values that events written before they were ' +
        'encrypted hold in plaintext (those of erased subjects become null), re-chain the history, and record the ' +
        'old and the new head in HistoryProtected.v1, so that a seal taken before can be checked',
    )
    .action(async () => {
      printJson(await protectHistory(config()));
    });
}
