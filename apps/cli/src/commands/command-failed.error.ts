/** The command has printed its outcome and only the exit code is left to set (verify found differences). */
export class CommandFailedError extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
    this.name = 'CommandFailedError';
  }
}
