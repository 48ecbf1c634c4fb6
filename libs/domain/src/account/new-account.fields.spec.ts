import { ValidationError } from '../shared/domain-error';
import { parseNewAccount, rolesOf } from './new-account.fields';

describe('new account fields', () => {
  it('parses the address, the user fields and the roles', () => {
    expect(parseNewAccount({ email: ' ada@example.com ', name: ' Ada ', age: 36, roles: ['admin'] })).toEqual(
      {
        email: 'ada@example.com',
        fields: { name: 'Ada', age: 36 },
        roles: ['admin'],
      },
    );
    expect(parseNewAccount({ email: 'b@example.com', name: 'B', age: 1 }).roles).toEqual([]);
  });

  it('reports every problem at once, unknown members included', () => {
    try {
      parseNewAccount({ email: 'x', name: '', age: 200, roles: ['admin', 'admin'], id: 1 });
      throw new Error('expected a ValidationError');
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).errors.map((e) => e.field)).toEqual([
        'id',
        'email',
        'name',
        'age',
        'roles',
      ]);
    }
  });

  it.each([[['auditor', 'admin']], [['user']], [[1]], ['admin'], [null]])('refuses roles %j', (roles) => {
    expect(() => parseNewAccount({ email: 'a@example.com', name: 'A', age: 1, roles })).toThrow(
      ValidationError,
    );
  });

  it('makes every account but an auditor a user', () => {
    expect(rolesOf([])).toEqual(['user']);
    expect(rolesOf(['admin'])).toEqual(['user', 'admin']);
    expect(rolesOf(['auditor'])).toEqual(['auditor']);
  });
});
