import { AuditRecord } from './audit-record';

/**
 * Audit records as CSV (RFC 4180): one header line, then a line per record, CRLF-terminated.
 * The columns are declared once here, for the API's `text/csv` and the CLI's `--format csv`.
 */
const COLUMNS: ReadonlyArray<[string, (record: AuditRecord) => string | number | null]> = [
  ['id', (record) => record.id],
  ['position', (record) => record.position],
  ['stream', (record) => record.stream],
  ['revision', (record) => record.revision],
  ['type', (record) => record.type],
  ['occurredAt', (record) => record.occurredAt],
  ['recordedAt', (record) => record.recordedAt],
  ['actor', (record) => record.actor],
  ['correlationId', (record) => record.correlationId],
  ['causationId', (record) => record.causationId],
  ['clientRequestId', (record) => record.clientRequestId],
  ['authMethod', (record) => record.auth?.method ?? null],
  ['authTokenId', (record) => record.auth?.tokenId ?? null],
  ['data', (record) => JSON.stringify(record.data)],
  ['hash', (record) => record.hash],
  ['erased', (record) => (record.erased === true ? 'true' : null)],
];

export const AUDIT_CSV_MEDIA_TYPE = 'text/csv';

/** Characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One field: a value a spreadsheet would run as a formula gets a leading `'` (so it shows as the
 * text it is), then a field holding a quote, comma or line break is quoted with quotes doubled.
 * Null is the empty field.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const AUDIT_CSV_HEADER = `${COLUMNS.map(([name]) => csvField(name)).join(',')}\r\n`;

export const auditCsvLine = (record: AuditRecord): string =>
  `${COLUMNS.map(([, value]) => csvField(value(record))).join(',')}\r\n`;
