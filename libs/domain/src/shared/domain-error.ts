export interface FieldError {
  field: string;
  message: string;
}

/** A rule of the domain was broken; `code` is stable and becomes the problem type. */
export abstract class DomainError extends Error {
  abstract readonly code: string;
}

export class ValidationError extends DomainError {
  constructor(
    readonly errors: FieldError[],
    /** The problem type: a rule of its own when a schema cannot state it (a password's policy). */
    readonly code: string = 'validation-error',
  ) {
    super(errors.map((e) => `${e.field}: ${e.message}`).join('; '));
    this.name = 'ValidationError';
  }
}

export class NotFoundError extends DomainError {
  readonly code = 'not-found';
  constructor(what: string) {
    super(`${what} not found`);
    this.name = 'NotFoundError';
  }
}

export class AlreadyExistsError extends DomainError {
  readonly code = 'already-exists';
  constructor(what: string) {
    super(`${what} already exists`);
    this.name = 'AlreadyExistsError';
  }
}
