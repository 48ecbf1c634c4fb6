import Table from 'cli-table3';
import { AuditRecord } from '@chronicle/application';
import { escapeUnsafe } from '@chronicle/domain';

/**
 * `audit --format table`: the records as a table for a person, fitted to the terminal's width
 * and safe to show on it. Apart from the command, which only decides when a table is printed.
 */

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

/** A cell as a terminal shows it: no character of it steers the terminal, and cut to its width. */
function cut(text: string, width: number): string {
  const safe = escapeUnsafe(text);
  return safe.length <= width ? safe : `${safe.slice(0, width - 1)}…`;
}
