import { Document } from 'bson';

/** A MongoDB server error: the double answers it as `{ok: 0, errmsg, code, codeName}`. */
export class CommandError extends Error {
  constructor(
    readonly code: number,
    readonly codeName: string,
    message: string,
    readonly extra: Document = {},
  ) {
    super(message);
  }

  toReply(): Document {
    return { ok: 0, errmsg: this.message, code: this.code, codeName: this.codeName, ...this.extra };
  }
}

export const badValue = (message: string) => new CommandError(2, 'BadValue', message);
export const failedToParse = (message: string) => new CommandError(9, 'FailedToParse', message);
export const typeMismatch = (message: string) => new CommandError(14, 'TypeMismatch', message);
export const namespaceNotFound = (message: string) => new CommandError(26, 'NamespaceNotFound', message);
export const namespaceExists = (message: string) => new CommandError(48, 'NamespaceExists', message);
export const immutableField = (message: string) => new CommandError(66, 'ImmutableField', message);
/** What the double answers for anything it does not model, so a gap fails loudly. */
export const notModelled = (what: string) =>
  new CommandError(115, 'CommandNotSupported', `mongo double does not support ${what}`);
