import { DynamicModule, Module } from '@nestjs/common';
import { CqrsModule, QueryBus } from '@nestjs/cqrs';
import { NestFactory } from '@nestjs/core';
import Table from 'cli-table3';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  auditTime,
  AuditModule,
  AuditRecord,
  ListAuditEventsQuery,
  MAX_AUDIT_LIMIT,
  parseSeal,
  SealHistoryQuery,
  VerifyHistoryQuery,
} from '@chronicle/application';
import { ChronicleConfig, ChronicleConfigModule } from '@chronicle/config';
import { EventStoreModule, InvalidPositionError, parsePosition, Position } from '@chronicle/event-store';
import { readFileSync } from 'node:fs';
import { printError, printJson } from '../output';
import { CommandFailedError } from './command-failed.error';

/** What `audit` needs: the event store only, never the read models. */
@Module({})
class AuditCliModule {
  static forRoot(config: ChronicleConfig): DynamicModule {
    return {
      module: AuditCliModule,
      imports: [ChronicleConfigModule.forRoot(config), CqrsModule, EventStoreModule.forRoot(), AuditModule],
    };
  }
}

interface AuditOptions {
  stream?: string;
  type?: string[];
  actor?: string;
  correlationId?: string;
  since?: string;
  until?: string;
  after?: Position;
  limit: number;
  format: 'json' | 'table';
}

/** Records a terminal run may print; a script can go further with --after. */
const MAX_CLI_LIMIT = 1_000_000;

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
  if (!/^\d{1,7}$/.test(value) || Number(value) < 1 || Number(value) > MAX_CLI_LIMIT) {
    throw new InvalidArgumentError(`must be from 1 to ${MAX_CLI_LIMIT}`);
  }
  return Number(value);
}

/** Runs `work` in the audit's application context: the event store and the audit only. */
async function withAudit<T>(config: ChronicleConfig, work: (queries: QueryBus) => Promise<T>): Promise<T> {
  const app = await NestFactory.createApplicationContext(AuditCliModule.forRoot(config), {
    logger: ['error'],
  });
  try {
    return await work(app.get(QueryBus));
  } finally {
    await app.close();
  }
}

/** A kept seal from `audit seal`; a file that holds none is a usage error. */
function sealOption(file: string) {
  let content: unknown;
  try {
    content = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new InvalidArgumentError(`cannot read a seal from ${file}: ${(error as Error).message}`);
  }
  const seal = parseSeal(content);
  if (seal === null) {
    throw new InvalidArgumentError(`${file} holds no seal { position, hash, recordedAt, signature }`);
  }
  return seal;
}

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
      const result = await withAudit(config(), (queries) =>
        queries.execute(new VerifyHistoryQuery(options.seal ?? null)),
      );
      printJson(result);
      if (!result.ok) throw new CommandFailedError(1);
    });
  audit
    .command('seal')
    .description('Verify the chain, then print its signed head { position, hash, recordedAt, signature }')
    .action(async () => {
      printJson(await withAudit(config(), (queries) => queries.execute(new SealHistoryQuery())));
    });
}

export function registerAuditCommand(program: Command, config: () => ChronicleConfig): void {
  const audit = program.command('audit');
  registerIntegrityCommands(audit, config);
  audit
    .description('The event history, oldest first, secrets redacted: one JSON object per line')
    .option('--stream <stream>', 'only this stream, e.g. user-<id>')
    .option(
      '--type <type>',
      'only this event type, e.g. UserPatched.v1; repeat for any of several',
      typeOption,
    )
    .option('--actor <actor>', 'only events caused by this account id, or system')
    .option('--correlation-id <id>', 'only events of the work this correlation id names')
    .option('--since <time>', 'only events recorded at or after this RFC 3339 time', timeOption)
    .option('--until <time>', 'only events recorded before this RFC 3339 time', timeOption)
    .option('--after <position>', 'only events after this position', positionOption)
    .option('--limit <n>', 'at most this many records', limitOption, 100)
    .addOption(
      new Option('--format <format>', 'json lines, or a table for a person')
        .choices(['json', 'table'])
        .default('json'),
    )
    .action(async (options: AuditOptions) => {
      const app = await NestFactory.createApplicationContext(AuditCliModule.forRoot(config()), {
        logger: ['error'],
      });
      try {
        const records: AuditRecord[] = [];
        const filter = {
          stream: options.stream,
          types: options.type,
          actor: options.actor,
          correlationId: options.correlationId,
          since: options.since,
          until: options.until,
        };
        let after = options.after;
        let remaining = options.limit;
        // Page by page, so that JSON lines start at once and memory stays flat.
        while (remaining > 0) {
          const page = await app
            .get(QueryBus)
            .execute(new ListAuditEventsQuery({ ...filter, after }, Math.min(remaining, MAX_AUDIT_LIMIT)));
          for (const record of page.records) {
            if (options.format === 'json') printJson(record);
            else records.push(record);
          }
          remaining -= page.records.length;
          if (page.next === null) break;
          after = page.next;
        }
        if (options.format === 'table') process.stdout.write(`${auditTable(records)}\n`);
      } catch (error) {
        // Only the store can tell that a well-formed --after falls inside a record: a usage error.
        if (!(error instanceof InvalidPositionError)) throw error;
        printError({ error: 'invalid-position', message: `--after: ${error.message}` });
        throw new CommandFailedError(2);
      } finally {
        await app.close();
      }
    });
}

/**
 * Columns that give up width when a table is wider than the terminal, first the data, stream,
 * correlation id and actor, last the time and position; never below MIN_WIDTH.
 */
const SHRINKABLE = [7, 2, 6, 5, 4, 1, 0];
const MIN_WIDTH = 4;
/** Without a terminal or COLUMNS: the widths a wide terminal would show. */
const CAPS = [20, 24, 44, 8, 32, 36, 36, 60];

/**
 * The terminal's width: its own when stdout is one, else COLUMNS, else none (CAPS decide).
 */
export function outputWidth(
  stdout: { isTTY?: boolean; columns?: number } = process.stdout,
  env = process.env,
): number | null {
  if (stdout.isTTY && stdout.columns) return stdout.columns;
  const columns = Number(env.COLUMNS);
  return Number.isInteger(columns) && columns > 0 ? columns : null;
}

/** Long values are cut so that each row stays one line and the table fits `width`. */
export function auditTable(records: AuditRecord[], width = outputWidth()): string {
  const head = ['position', 'occurredAt', 'stream', 'rev', 'type', 'actor', 'correlationId', 'data'];
  const rows = records.map((record) => [
    record.position,
    record.occurredAt,
    record.stream,
    String(record.revision),
    record.type,
    record.actor,
    record.correlationId,
    JSON.stringify(record.data),
  ]);
  const widths = head.map((title, column) =>
    Math.min(CAPS[column], Math.max(title.length, ...rows.map((row) => row[column].length))),
  );
  // Each column costs its width, a space either side and a border; plus the closing border.
  const total = () => widths.reduce((sum, columnWidth) => sum + columnWidth + 3, 1);
  if (width !== null) {
    for (const column of SHRINKABLE) {
      const excess = total() - width;
      if (excess <= 0) break;
      widths[column] = Math.max(MIN_WIDTH, widths[column] - excess);
    }
  }
  const table = new Table({
    head: head.map((title, column) => cut(title, widths[column])),
    style: { head: [], border: [], compact: true },
    colWidths: widths.map((columnWidth) => columnWidth + 2),
  });
  for (const row of rows) table.push(row.map((value, column) => cut(value, widths[column])));
  return `${table.toString()}\n${records.length} record${records.length === 1 ? '' : 's'}`;
}

function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}
