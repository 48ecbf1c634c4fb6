import { AlreadyExistsError, DomainError, NotFoundError, ValidationError } from './domain-error';

// The code becomes the problem type clients branch on, and the name and message reach the logs.
describe('domain errors', () => {
  it('ValidationError: code validation-error, every field in the message, the fields kept', () => {
    const errors = [
      { field: 'name', message: 'must be a string' },
      { field: 'age', message: 'must be an integer from 0 to 150' },
    ];
    const error = new ValidationError(errors);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({
      code: 'validation-error',
      name: 'ValidationError',
      message: 'name: must be a string; age: must be an integer from 0 to 150',
      errors,
    });
  });

  it('NotFoundError: code not-found, naming what was not found', () => {
    expect(new NotFoundError('User')).toMatchObject({
      code: 'not-found',
      name: 'NotFoundError',
      message: 'User not found',
    });
  });

  it('AlreadyExistsError: code already-exists, naming what exists', () => {
    expect(new AlreadyExistsError('Customer 7')).toMatchObject({
      code: 'already-exists',
      name: 'AlreadyExistsError',
      message: 'Customer 7 already exists',
    });
  });
});
