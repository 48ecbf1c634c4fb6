import { FieldError, ValidationError } from '../shared/domain-error';
import { AGE_MAX, AGE_MIN, checkAge, checkName, isFieldError, NAME_MAX_LENGTH } from '../shared/values';

interface FieldDeclaration {
  type: 'string' | 'integer';
  /**
   * Parses the value a client sends, at registration and in a patch: the value to store, or why
   * it is refused. Absent: the service sets the field, and no client may.
   */
  parse?: (field: string, value: unknown) => unknown;
  /** JSON Schema keywords beyond `type`, for the API's document. */
  schema: Record<string, unknown>;
}

/**
 * The one declaration of a user's fields, in the order every representation lists them. The
 * aggregate, the users projection, both read stores, their validation and the API all take their
 * field list from here: a new field is declared here and given its decision rules, nothing more.
 */
export const USER_FIELDS = {
  name: {
    type: 'string',
    parse: checkName,
    // At least one character that trimming keeps (JSON schema's \s is the whitespace trim removes).
    schema: {
      minLength: 1,
      maxLength: NAME_MAX_LENGTH,
      pattern: '\\S',
      description: 'Trimmed; counted in characters.',
    },
  },
  age: { type: 'integer', parse: checkAge, schema: { minimum: AGE_MIN, maximum: AGE_MAX } },
  createdon: { type: 'string', schema: { format: 'date-time' } },
  modifiedon: {
    type: 'string',
    schema: { format: 'date-time', description: 'Changes only when a value does.' },
  },
} as const satisfies Record<string, FieldDeclaration>;

type Declared = typeof USER_FIELDS;
type ValueOf<T extends FieldDeclaration['type']> = T extends 'integer' ? number : string;

export type UserFieldName = keyof Declared;
/** A user's fields, as stored and shown. */
export type UserFields = { -readonly [F in UserFieldName]: ValueOf<Declared[F]['type']> };
/** The fields a client sets: at registration, and in a patch. */
export type ClientFieldName = {
  [F in UserFieldName]: Declared[F] extends { parse: unknown } ? F : never;
}[UserFieldName];
export type ClientFields = Pick<UserFields, ClientFieldName>;

/** A user as every reader sees it: its id, then its fields. */
export type UserRepresentation = { id: string } & UserFields;

export const USER_FIELD_NAMES = Object.keys(USER_FIELDS) as UserFieldName[];
export const CLIENT_FIELD_NAMES = USER_FIELD_NAMES.filter(
  (field): field is ClientFieldName => 'parse' in USER_FIELDS[field],
);

/** The JavaScript type of a field's values, as `typeof` names it. */
export const fieldJsType = (field: UserFieldName): 'string' | 'number' =>
  USER_FIELDS[field].type === 'integer' ? 'number' : 'string';

/** The declared fields of `source` that hold a value, in declaration order, and nothing else. */
export function pickUserFields<F extends UserFieldName>(
  source: Partial<Record<F, unknown>>,
  fields: readonly F[] = USER_FIELD_NAMES as F[],
): Partial<Pick<UserFields, F>> {
  const picked: Partial<Record<F, unknown>> = {};
  for (const field of fields) if (source[field] !== undefined) picked[field] = source[field];
  return picked as Partial<Pick<UserFields, F>>;
}

/**
 * Parses what a client sends for a user: every client field at registration, any of them in a
 * patch (RFC 7396: `null` removes a member, which a required field refuses). Any other member is
 * refused. Reports every problem at once.
 */
export function parseClientFields(input: Record<string, unknown>, mode: 'all'): ClientFields;
export function parseClientFields(input: Record<string, unknown>, mode: 'patch'): Partial<ClientFields>;
export function parseClientFields(
  input: Record<string, unknown>,
  mode: 'all' | 'patch',
): Partial<ClientFields> {
  const errors: FieldError[] = [];
  const values: Partial<Record<ClientFieldName, unknown>> = {};
  for (const field of Object.keys(input)) {
    if (!(CLIENT_FIELD_NAMES as string[]).includes(field)) {
      errors.push({ field, message: 'is not a field that can be changed' });
    }
  }
  for (const field of CLIENT_FIELD_NAMES) {
    const present = Object.prototype.hasOwnProperty.call(input, field) && input[field] !== undefined;
    if (!present && mode === 'patch') continue;
    const value =
      !present || input[field] === null
        ? { field, message: mode === 'patch' ? 'is required and cannot be removed' : 'is required' }
        : USER_FIELDS[field].parse(field, input[field]);
    if (isFieldError(value)) errors.push(value);
    else values[field] = value;
  }
  if (errors.length > 0) throw new ValidationError(errors);
  return values as Partial<ClientFields>;
}

/** What a reader is shown of a user (or of a stored document): its id and its fields, in order. */
export function userRepresentation(source: { id: string } & Partial<UserFields>): UserRepresentation {
  return { id: source.id, ...pickUserFields(source) } as UserRepresentation;
}
