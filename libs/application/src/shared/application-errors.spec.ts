import {
  ConcurrencyConflictError,
  EmailTakenError,
  ForbiddenError,
  PreconditionFailedError,
} from './application-errors';

// The API maps each error to a problem by its code, and shows its message as the detail.
describe('application errors', () => {
  it.each([
    [
      new PreconditionFailedError(3),
      'PreconditionFailedError',
      'precondition-failed',
      'The resource has changed since the version named in If-Match',
    ],
    [
      new ConcurrencyConflictError('user-1'),
      'ConcurrencyConflictError',
      'conflict',
      'Too many concurrent changes to user-1; try again',
    ],
    [new ForbiddenError('Only admins may do that'), 'ForbiddenError', 'forbidden', 'Only admins may do that'],
    [
      new EmailTakenError(),
      'EmailTakenError',
      'email-taken',
      'An account with this e-mail address already exists',
    ],
  ])('%s is named %s, with code %s and its message', (error, name, code, message) => {
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name, code, message });
  });

  it('say which revision, and which stream, they are about', () => {
    expect(new PreconditionFailedError(3).currentRevision).toBe(3);
    expect(new PreconditionFailedError(null).currentRevision).toBeNull();
    expect(new ConcurrencyConflictError('user-1').stream).toBe('user-1');
  });
});
