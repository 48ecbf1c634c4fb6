import { QueryBus } from '@nestjs/cqrs';
import type { INestApplicationContext } from '@nestjs/common';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  AUDIT_CSV_HEADER,
  auditCsvLine,
  auditTime,
  AuditRecord,
  HistoryVerification,
  ListAuditEventsQuery,
  MAX_AUDIT_LIMIT,
  ErasureReceiptQuery,
  parseReceipt,
  parseSeal,
  SealHistoryQuery,
  VerifyReceiptQuery,
  VerifyHistoryQuery,
} from '@chronicle/application';
import { ChronicleConfig } from '@chronicle/config';
import {
  comparePositions,
  EventStore,
  formatPosition,
  InvalidPositionError,
  parsePosition,
  Position,
} from '@chronicle/event-store';
import { readFileSync } from 'node:fs';
import { escapeUnsafe } from '@chronicle/domain';
import { jsonLine, printError, printJson } from '../output';
import { auditTable } from './audit-table';
import { CommandFailedError } from './command-failed.error';
import { recordHistoryRead, withHistory } from './history-cli.module';

interface AuditOptions {
  stream?: string;
  type?: string[];
  actor?: string;
  correlationId?: string;
  since?: string;
  until?: string;
  after?: Position;
  limit?: number;
  format: 'ndjson' | 'json' | 'csv' | 'table';
  raw: boolean;
}

/** Records a table shows unless --limit says otherwise: it is for a person, and held in memory. */
const DEFAULT_TABLE_LIMIT = 100;

function positionOption(value: string): Position {
  const parsed = parsePosition(value);
  if (!parsed) throw new InvalidArgumentError('must be a position such as 42 or 42:40');
  return parsed;
}

function timeOption(value: string): string {
  const time = auditTime(value);
  if (time === null) throw new InvalidArgumentError('must be an RFC 3339 time such as 2026-11-22T09:15:00Z');
  return time;
}

function typeOption(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function limitOption(value: string): number {
  if (!/^\d{1,15}$/.test(value) || Number(value) < 1)
    throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}

export interface ExportManifest {
  /** The log's last position when the export began: every matching record up to it is exported. */
  head: string | null;
  count: number;
  /** The last exported record's own hash; with filters, it stands for nothing beyond that record. */
  lastRecordHash: string | null;
  /**
   * What `audit verify` says of the history up to `head`: its `head` is the chain's head there
   * (position, hash, recordedAt), what `audit seal` signs, to hold against a kept seal. Null for
   * an empty history.
   */
  chain: HistoryVerification | null;
}

export function exportManifest(
  head: Position | null,
  count: number,
  lastRecordHash: string | null,
  chain: HistoryVerification | null,
): ExportManifest {
  return { head: head === null ? null : formatPosition(head), count, lastRecordHash, chain };
}

/** Written as it goes, waiting when the reader is slower: memory stays flat whatever the export's size. */
function writeOut(text: string): Promise<void> | undefined {
  if (process.stdout.write(text)) return undefined;
  return new Promise((resolve) => process.stdout.once('drain', resolve));
}

/** A kept JSON file of `what` (a seal, a receipt); a file that holds none is a usage error. */
function keptFile<T>(file: string, what: string, parse: (value: unknown) => T | null, shape: string): T {
  let content: unknown;
  try {
    content = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new InvalidArgumentError(`cannot read a ${what} from ${file}: ${(error as Error).message}`);
  }
  const parsed = parse(content);
  if (parsed === null) throw new InvalidArgumentError(`${file} holds no ${what} ${shape}`);
  return parsed;
}

/** A kept seal from `audit seal`. */
const sealOption = (file: string) =>
  keptFile(file, 'seal', parseSeal, '{ position, hash, recordedAt, signature }');

/** A kept receipt from `audit receipt`. */
const receiptOption = (file: string) =>
  keptFile(file, 'receipt', parseReceipt, '{ subject, kind, erasedAt, position, hash, signature }');

function registerIntegrityCommands(audit: Command, config: () => ChronicleConfig): void {
  audit
    .command('verify')
    .description('Walk the hash chain and name the first broken position; exits 1 when broken')
    .option(
      '--seal <file>',
      'also check a seal kept from `audit seal`: catches a history cut short',
      sealOption,
    )
    .action(async (options: { seal?: ReturnType<typeof sealOption> }) => {
      const result = await withHistory(config(), async (app) => {
        await recordHistoryRead(app, 'audit verify');
        return app.get(QueryBus).execute(new VerifyHistoryQuery(options.seal ?? null));
      });
      printJson(result);
      if (!result.ok) throw new CommandFailedError(1);
    });
  audit
    .command('seal')
    .description('Verify the chain, then print its signed head { position, hash, recordedAt, signature }')
    .action(async () => {
      printJson(await withHistory(config(), (app) => app.get(QueryBus).execute(new SealHistoryQuery())));
    });
  audit
    .command('receipt')
    .description(
      'Print the signed receipt of an erasure { subject, kind, erasedAt, position, hash, signature }: ' +
        "its SubjectErased.v1 event, where the history holds it and that event's hash; exits 1 when never erased",
    )
    .requiredOption(
      '--subject <stream>',
      'the erased subject, as its stream: user-<user id> or customer-<number>',
    )
    .action(async (options: { subject: string }) => {
      printJson(
        await withHistory(config(), (app) =>
          app.get(QueryBus).execute(new ErasureReceiptQuery(options.subject)),
        ),
      );
    });
  audit
    .command('verify-receipt')
    .description(
      'Check a receipt kept from `audit receipt`: its signature, the erasure it names, and the hash chain up to it; ' +
        'exits 1 when it does not hold',
    )
    .requiredOption('--receipt <file>', 'the receipt, as `audit receipt` printed it', receiptOption)
    .action(async (options: { receipt: ReturnType<typeof receiptOption> }) => {
      const result = await withHistory(config(), (app) =>
        app.get(QueryBus).execute(new VerifyReceiptQuery(options.receipt)),
      );
      printJson(result);
      if (!result.ok) throw new CommandFailedError(1);
    });
}

export function registerAuditCommand(program: Command, config: () => ChronicleConfig): void {
  const audit = program.command('audit');
  registerIntegrityCommands(audit, config);
  audit
    .description(
      'The event history, oldest first, secrets redacted: every matching record up to the head, one per ' +
        'line, then a {"manifest"} line and a {"cursor"} line (in CSV too) to go on from with --after',
    )
    .option('--stream <stream>', 'only this stream, e.g. user-<id>')
    .option(
      '--type <type>',
      'only this event type, e.g. UserPatched.v1 (as stored with --raw); repeat for any of several',
      typeOption,
    )
    .option('--actor <actor>', 'only events caused by this account id, or system')
    .option('--correlation-id <id>', 'only events of the work this correlation id names')
    .option('--since <time>', 'only events recorded at or after this RFC 3339 time', timeOption)
    .option('--until <time>', 'only events recorded before this RFC 3339 time', timeOption)
    .option('--after <position>', 'only events after this position', positionOption)
    .option(
      '--limit <n>',
      `at most this many records (default: all; ${DEFAULT_TABLE_LIMIT} for a table)`,
      limitOption,
    )
    .option('--raw', 'events as stored, before upcasting: older versions as they were written', false)
    .addOption(
      new Option(
        '--format <format>',
        'JSON lines (json is the same), CSV (RFC 4180), or a table for a person',
      )
        .choices(['ndjson', 'json', 'csv', 'table'])
        .default('ndjson'),
    )
    .action(async (options: AuditOptions) => {
      try {
        await withHistory(config(), (app) => exportHistory(app, options));
      } catch (error) {
        // Only the store can tell that a well-formed --after falls inside a record: a usage error.
        if (!(error instanceof InvalidPositionError)) throw error;
        printError({ error: 'invalid-position', message: `--after: ${error.message}` });
        throw new CommandFailedError(2);
      }
    });
}

/** Every matching record up to the head the export began at, then the manifest and cursor lines. */
async function exportHistory(app: INestApplicationContext, options: AuditOptions): Promise<void> {
  await recordHistoryRead(app, 'audit');
  const queries = app.get(QueryBus);
  const table = options.format === 'table';
  const cap = options.limit ?? (table ? DEFAULT_TABLE_LIMIT : Number.POSITIVE_INFINITY);
  // The export ends at the head it began with: a snapshot, whatever is written meanwhile.
  const head = await app.get(EventStore).headPosition();
  const filter = {
    stream: options.stream,
    types: options.type,
    actor: options.actor,
    correlationId: options.correlationId,
    since: options.since,
    until: options.until,
    raw: options.raw,
  };
  const records: AuditRecord[] = [];
  if (options.format === 'csv') await writeOut(AUDIT_CSV_HEADER);
  let after = options.after;
  let count = 0;
  let last: Position | null = null;
  let lastRecordHash: string | null = null;
  let complete = head === null;
  // Page by page, so that lines start at once and memory stays flat.
  while (!complete && count < cap) {
    const page = await queries.execute(
      new ListAuditEventsQuery({ ...filter, after }, Math.min(cap - count, MAX_AUDIT_LIMIT)),
    );
    for (const record of page.records) {
      const position = parsePosition(record.position)!;
      if (comparePositions(position, head!) > 0) {
        complete = true;
        break;
      }
      if (table) records.push(record);
      else await writeOut(options.format === 'csv' ? csvOut(auditCsvLine(record)) : jsonLine(record));
      count++;
      last = position;
      lastRecordHash = record.hash;
    }
    if (page.next === null || comparePositions(page.next, head!) >= 0) complete = true;
    after = page.next ?? undefined;
  }
  if (table) {
    process.stdout.write(`${auditTable(records)}\n`);
    return;
  }
  // Complete: everything up to the head was read. Cut short by --limit: go on after the last record.
  const cursor = complete ? (head ?? options.after ?? null) : last;
  // The chain walked up to the export's head, as `audit verify` walks it: its head is the seal's.
  const chain = head === null ? null : await queries.execute(new VerifyHistoryQuery(null, head));
  await writeOut(jsonLine({ manifest: exportManifest(head, count, lastRecordHash, chain) }));
  await writeOut(jsonLine({ cursor: cursor === null ? null : formatPosition(cursor) }));
  if (chain !== null && !chain.ok) {
    printError({
      error: 'chain-broken',
      message: `The hash chain breaks at position ${chain.broken!.position}: the exported history was tampered with (see audit verify)`,
    });
    throw new CommandFailedError(1);
  }
}

/**
 * CSV is data: kept as it is for a file or a pipe, but escaped on a terminal, where a person
 * reads it and its controls would act. The record's line end stays.
 */
function csvOut(line: string): string {
  return process.stdout.isTTY === true ? `${escapeUnsafe(line.replace(/\r\n$/, ''))}\r\n` : line;
}
