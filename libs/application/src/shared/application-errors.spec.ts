import {
  ConcurrencyConflictError,
  EmailTakenError,
  ForbiddenError,
  PreconditionFailedError,
} from './application-errors';

// The API maps each error to a problem by its code, and shows its message as the detail. The cases
// are named by a fixed label, never by the error's own texts: those are what the spec checks.
describe('application errors', () => {
  it.each([
    [
      'a failed If-Match',
      () => new PreconditionFailedError(3),
      'PreconditionFailedError',
      'precondition-failed',
      'The resource has changed since the version named in If-Match',
    ],
    [
      'a conflict',
      () => new ConcurrencyConflictError('user-1'),
      'ConcurrencyConflictError',
      'conflict',
      'Too many concurrent changes to user-1; try again',
    ],
    [
      'a refusal',
      () => new ForbiddenError('Only admins may do that'),
      'ForbiddenError',
      'forbidden',
      'Only admins may do that',
    ],
    [
      'a taken address',
      () => new EmailTakenError(),
      'EmailTakenError',
      'email-taken',
      'An account with this e-mail address already exists',
    ],
  ])('%s has its name, code and message', (_label, make, name, code, message) => {
    const error = make();
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
  });

  it('say which revision, and which stream, they are about', () => {
    expect(new PreconditionFailedError(3).currentRevision).toBe(3);
    expect(new PreconditionFailedError(null).currentRevision).toBeNull();
    expect(new ConcurrencyConflictError('user-1').stream).toBe('user-1');
  });
});
