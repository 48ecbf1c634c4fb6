import { FieldError, ValidationError } from '../shared/domain-error';
import { EMAIL_FIELD, FieldDeclaration, parseDeclaredFields } from '../shared/fields';
import { ClientFields, USER_FIELDS } from '../user/user.fields';
import { Role } from './account.events';

/**
 * The one declaration of what opens an account: its login address and its user's fields (from
 * USER_FIELDS). The roles beside them are `GRANTABLE_ROLES`. POST /api/v1/accounts, the CLI's
 * `accounts create` and the API's document take them from here.
 */
export const NEW_ACCOUNT_FIELDS = {
  email: EMAIL_FIELD,
  name: USER_FIELDS.name,
  age: USER_FIELDS.age,
} as const satisfies Record<string, FieldDeclaration>;

/** Roles an account may be given on opening; every account but an auditor is also a `user`. */
export const GRANTABLE_ROLES = ['admin', 'auditor'] as const;
export type GrantableRole = (typeof GRANTABLE_ROLES)[number];

export interface NewAccount {
  email: string;
  fields: ClientFields;
  roles: GrantableRole[];
}

/** Parses a new account as sent (`{ email, name, age, roles? }`), reporting every problem at once. */
export function parseNewAccount(input: Record<string, unknown>): NewAccount {
  const { roles: givenRoles, ...rest } = input;
  const errors: FieldError[] = [];
  let parsed: Record<string, unknown> = {};
  try {
    parsed = parseDeclaredFields(NEW_ACCOUNT_FIELDS, rest, 'all');
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    errors.push(...error.errors);
  }
  const roles = parseRoles(givenRoles);
  if (!Array.isArray(roles)) errors.push(roles);
  if (errors.length > 0 || !Array.isArray(roles)) throw new ValidationError(errors);
  const { email, name, age } = parsed as { email: string } & ClientFields;
  return { email, fields: { name, age }, roles };
}

function parseRoles(value: unknown): GrantableRole[] | FieldError {
  if (value === undefined) return [];
  const valid =
    Array.isArray(value) &&
    value.every((role) => (GRANTABLE_ROLES as readonly unknown[]).includes(role)) &&
    new Set(value).size === value.length;
  if (!valid)
    return {
      field: 'roles',
      message: `must be a list of distinct roles out of ${GRANTABLE_ROLES.join(', ')}`,
    };
  if (value.length > 1) return { field: 'roles', message: 'an auditor holds no other role' };
  return value as GrantableRole[];
}

/** The roles an account opened with `granted` holds. */
export const rolesOf = (granted: readonly GrantableRole[]): Role[] =>
  granted.includes('auditor') ? ['auditor'] : ['user', ...granted];
