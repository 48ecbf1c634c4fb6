import { escapeUnsafe, FieldError } from '@chronicle/domain';

/**
 * A value as one line of JSON, with the characters that could steer a terminal (C1 and
 * bidirectional controls; JSON escapes C0) escaped: the same value, safe on a screen.
 */
export const jsonLine = (value: unknown): string => `${escapeUnsafe(JSON.stringify(value))}\n`;

/** One JSON object per line on stdout: what every command prints. */
export function printJson(value: unknown): void {
  process.stdout.write(jsonLine(value));
}

export interface CliErrorReport {
  error: string;
  message: string;
  errors?: FieldError[];
}

/** Errors go to stderr as JSON too, so scripts can read them; the exit code says it failed. */
export function printError(report: CliErrorReport): void {
  process.stderr.write(jsonLine(report));
}
