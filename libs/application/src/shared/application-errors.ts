/** The resource changed since the client read it (If-Match did not match). */
export class PreconditionFailedError extends Error {
  readonly code = 'precondition-failed';
  constructor(readonly currentRevision: number | null) {
    super('The resource has changed since the version named in If-Match');
    this.name = 'PreconditionFailedError';
  }
}

/** Concurrent writers kept winning: the bounded retries ran out. */
export class ConcurrencyConflictError extends Error {
  readonly code = 'conflict';
  constructor(readonly stream: string) {
    super(`Too many concurrent changes to ${stream}; try again`);
    this.name = 'ConcurrencyConflictError';
  }
}

export class ForbiddenError extends Error {
  readonly code = 'forbidden';
  constructor(message: string) {
    super(message);
    this.name = 'ForbiddenError';
  }
}

/** The address already belongs to an account. */
export class EmailTakenError extends Error {
  readonly code = 'email-taken';
  constructor() {
    super('An account with this e-mail address already exists');
    this.name = 'EmailTakenError';
  }
}
