import { FieldError } from '@chronicle/domain';

/** One JSON object per line on stdout: what every command prints. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

export interface CliErrorReport {
  error: string;
  message: string;
  errors?: FieldError[];
}

/** Errors go to stderr as JSON too, so scripts can read them; the exit code says it failed. */
export function printError(report: CliErrorReport): void {
  process.stderr.write(`${JSON.stringify(report)}\n`);
}
