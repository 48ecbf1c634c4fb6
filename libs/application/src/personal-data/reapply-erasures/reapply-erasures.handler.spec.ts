import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandBus } from '@nestjs/cqrs';
import { ErasureLog, SqliteEventStore } from '@chronicle/event-store';
import { CommandContext } from '../../shared/command-context';
import { toNewEvent } from '../../shared/event-sourced-repository';
import { EraseSubjectCommand } from '../erase-subject/erase-subject.command';
import { ReapplyErasuresHandler } from './reapply-erasures.handler';
import { ReapplyErasuresCommand } from './reapply-erasures.command';

const CONTEXT: CommandContext = {
  actor: 'cli:op',
  correlationId: 'c-restore',
  auth: { method: 'system', tokenId: null },
};

describe('ReapplyErasuresHandler', () => {
  let dir: string;
  let store: SqliteEventStore;
  let log: ErasureLog;
  let erased: EraseSubjectCommand[];
  let handler: ReapplyErasuresHandler;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'reapply-'));
    store = SqliteEventStore.open(join(dir, 'data'));
    log = new ErasureLog(join(dir, 'erasures.jsonl'));
    erased = [];
    const commands = {
      execute: (command: EraseSubjectCommand) => {
        erased.push(command);
        return Promise.resolve({
          subject: `${command.kind}-${command.id}`,
          kind: command.kind,
          erasedAt: 'now',
          position: '9',
        });
      },
    } as unknown as CommandBus;
    handler = new ReapplyErasuresHandler(log, store, commands);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A stream begun by one event; its id. */
  async function begin(stream: string): Promise<string> {
    const event = toNewEvent({ type: 'Begun.v1', data: {} }, CONTEXT, new Date());
    await store.append(stream, [event], 'no_stream');
    return event.id;
  }

  it('erases again each logged subject whose stream begins with the logged event, and no other', async () => {
    const userFirst = await begin('user-u-1');
    await begin('customer-7');
    await log.append({
      subject: { kind: 'user', id: 'u-1' },
      erasedAt: '2026-01-01T00:00:00.000Z',
      firstEventId: userFirst,
    });
    // Customer 7 of the log was another: the number was given again after a restore.
    await log.append({
      subject: { kind: 'customer', id: '7' },
      erasedAt: '2026-01-01T00:00:00.000Z',
      firstEventId: randomUUID(),
    });
    // Made after the backup: not in this history.
    await log.append({
      subject: { kind: 'customer', id: '8' },
      erasedAt: '2026-01-01T00:00:00.000Z',
      firstEventId: randomUUID(),
    });
    appendFileSync(log.file, '{"subject":');

    const result = await handler.execute(new ReapplyErasuresCommand(CONTEXT));

    expect(erased.map(({ kind, id, context }) => ({ kind, id, context }))).toEqual([
      { kind: 'user', id: 'u-1', context: CONTEXT },
    ]);
    expect(result).toEqual({
      reapplied: [{ subject: 'user-u-1', kind: 'user', erasedAt: 'now', position: '9' }],
      notHeld: 2,
      unreadable: 1,
    });
  });

  it('does nothing without a log', async () => {
    await begin('user-u-1');
    expect(await handler.execute(new ReapplyErasuresCommand(CONTEXT))).toEqual({
      reapplied: [],
      notHeld: 0,
      unreadable: 0,
    });
    expect(erased).toEqual([]);
  });
});
