import { QueryBus } from '@nestjs/cqrs';
import { NestFactory } from '@nestjs/core';
import Table from 'cli-table3';
import { Command, InvalidArgumentError, Option } from 'commander';
import { AuditRecord, ListAuditEventsQuery, MAX_AUDIT_LIMIT } from '@chronicle/application';
import { ChronicleConfig } from '@chronicle/config';
import { InvalidPositionError, parsePosition, Position } from '@chronicle/event-store';
import { printError, printJson } from '../output';
import { CommandFailedError } from './command-failed.error';
import { HistoryCliModule } from './history-cli.module';

interface AuditOptions {
  stream?: string;
  type?: string;
  actor?: string;
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

function limitOption(value: string): number {
  if (!/^\d{1,7}$/.test(value) || Number(value) < 1 || Number(value) > MAX_CLI_LIMIT) {
    throw new InvalidArgumentError(`must be from 1 to ${MAX_CLI_LIMIT}`);
  }
  return Number(value);
}

export function registerAuditCommand(program: Command, config: () => ChronicleConfig): void {
  program
    .command('audit')
    .description('The event history, oldest first, secrets redacted: one JSON object per line')
    .option('--stream <stream>', 'only this stream, e.g. user-<id>')
    .option('--type <type>', 'only this event type, e.g. UserPatched.v1')
    .option('--actor <actor>', 'only events caused by this account id, or system')
    .option('--after <position>', 'only events after this position', positionOption)
    .option('--limit <n>', 'at most this many records', limitOption, 100)
    .addOption(
      new Option('--format <format>', 'json lines, or a table for a person')
        .choices(['json', 'table'])
        .default('json'),
    )
    .action(async (options: AuditOptions) => {
      const app = await NestFactory.createApplicationContext(HistoryCliModule.forRoot(config()), {
        logger: ['error'],
      });
      try {
        const records: AuditRecord[] = [];
        const filter = { stream: options.stream, type: options.type, actor: options.actor };
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
