import {
  ClientFieldNameOf,
  clientFieldsOf,
  FieldDeclaration,
  NAME_FIELD,
  parseDeclaredFields,
  pickFields,
  ValuesOf,
} from '../shared/fields';
import { AGE_MAX, AGE_MIN, checkAge } from '../shared/values';

/**
 * The one declaration of a user's fields, in the order every representation lists them. The
 * aggregate, the users projection, both read stores, their validation and the API all take their
 * field list from here: a new field is declared here and given its decision rules, nothing more.
 */
export const USER_FIELDS = {
  name: NAME_FIELD,
  age: { type: 'integer', parse: checkAge, personal: true, schema: { minimum: AGE_MIN, maximum: AGE_MAX } },
  createdon: { type: 'string', schema: { format: 'date-time' } },
  modifiedon: {
    type: 'string',
    schema: { format: 'date-time', description: 'Changes only when a value does.' },
  },
} as const satisfies Record<string, FieldDeclaration>;

export type UserFieldName = keyof typeof USER_FIELDS;
/** A user's fields, as stored and shown. */
export type UserFields = ValuesOf<typeof USER_FIELDS>;
/** The fields a client sets: at registration, and in a patch. */
export type ClientFieldName = ClientFieldNameOf<typeof USER_FIELDS>;
export type ClientFields = Pick<UserFields, ClientFieldName>;

/** A user as every reader sees it: its id, then its fields. */
export type UserRepresentation = { id: string } & UserFields;

export const USER_FIELD_NAMES = Object.keys(USER_FIELDS) as UserFieldName[];
export const CLIENT_FIELD_NAMES = clientFieldsOf(USER_FIELDS) as ClientFieldName[];

/** The declared fields of `source` that hold a value, in declaration order, and nothing else. */
export function pickUserFields<F extends UserFieldName>(
  source: Partial<Record<F, unknown>>,
  fields: readonly F[] = USER_FIELD_NAMES as F[],
): Partial<Pick<UserFields, F>> {
  return pickFields<UserFields, F>(source, fields);
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
  return parseDeclaredFields(USER_FIELDS, input, mode);
}

/** What a reader is shown of a user (or of a stored document): its id and its fields, in order. */
export function userRepresentation(source: { id: string } & Partial<UserFields>): UserRepresentation {
  return { id: source.id, ...pickUserFields(source) } as UserRepresentation;
}
