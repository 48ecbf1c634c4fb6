import { FieldError, ValidationError } from './domain-error';
import { checkEmail, checkName, EMAIL_MAX_LENGTH, isFieldError, NAME_MAX_LENGTH } from './values';

export interface FieldDeclaration {
  type: 'string' | 'integer';
  /**
   * Parses the value a client sends, at creation and in a patch: the value to store, or why it
   * is refused. Absent: the service sets the field, and no client may.
   */
  parse?: (field: string, value: unknown) => unknown;
  /** JSON Schema keywords beyond `type`, for the API's document. */
  schema: Record<string, unknown>;
  /**
   * A value about a person (API.md "Personal data"): events store it encrypted under its
   * subject's key, and it is gone when the subject is erased.
   */
  personal?: true;
}

export type FieldDeclarations = Record<string, FieldDeclaration>;

/** A person's or a customer's name: declared once for every entity that has one. */
export const NAME_FIELD = {
  type: 'string',
  parse: checkName,
  personal: true,
  // At least one character that trimming keeps (JSON schema's \s is the whitespace trim removes).
  schema: {
    minLength: 1,
    maxLength: NAME_MAX_LENGTH,
    pattern: '\\S',
    description: 'Trimmed; counted in characters.',
  },
} as const satisfies FieldDeclaration;

/** An e-mail address (an account's login, a customer's contact): declared once. */
export const EMAIL_FIELD = {
  type: 'string',
  parse: checkEmail,
  personal: true,
  schema: { format: 'email', maxLength: EMAIL_MAX_LENGTH, example: 'ada@example.com' },
} as const satisfies FieldDeclaration;

/** The TypeScript type of a declared field's values. */
export type FieldValue<T extends FieldDeclaration['type']> = T extends 'integer' ? number : string;

/** The values of every field of a declaration, as stored and shown. */
export type ValuesOf<D extends FieldDeclarations> = { -readonly [F in keyof D]: FieldValue<D[F]['type']> };

/** The names of the fields a client sets (those with a parser). */
export type ClientFieldNameOf<D extends FieldDeclarations> = {
  [F in keyof D]: D[F] extends { parse: unknown } ? F : never;
}[keyof D];

/** Each declared field with the JavaScript type of its values, as `typeof` names it, in declaration order. */
export function fieldJsTypes(declaration: FieldDeclarations): [string, 'string' | 'number'][] {
  return Object.entries(declaration).map(([field, { type }]) => [
    field,
    type === 'integer' ? 'number' : 'string',
  ]);
}

/** The members of `source` named by `fields` that hold a value, in the order of `fields`, and nothing else. */
export function pickFields<T, F extends keyof T & string>(
  source: Partial<Record<F, unknown>>,
  fields: readonly F[],
): Partial<Pick<T, F>> {
  const picked: Partial<Record<F, unknown>> = {};
  for (const field of fields) if (source[field] !== undefined) picked[field] = source[field];
  return picked as Partial<Pick<T, F>>;
}

/** The personal fields of a declaration, in declaration order. */
export function personalFieldsOf<D extends FieldDeclarations>(declaration: D): (keyof D & string)[] {
  return Object.keys(declaration).filter((field) => declaration[field].personal === true);
}

/** The fields of a declaration a client sets (those with a parser), in declaration order. */
export function clientFieldsOf<D extends FieldDeclarations>(declaration: D): (keyof D & string)[] {
  return Object.keys(declaration).filter((field) => declaration[field].parse !== undefined);
}

/**
 * Parses what a client sends for an entity declared by `declaration`: every client field on
 * creation (`all`), any of them in a merge patch (`patch`, RFC 7396: `null` removes a member,
 * which a required field refuses). Any other member is refused. Reports every problem at once.
 */
export function parseDeclaredFields(
  declaration: FieldDeclarations,
  input: Record<string, unknown>,
  mode: 'all' | 'patch',
): Record<string, unknown> {
  const clientFields = clientFieldsOf(declaration);
  const errors: FieldError[] = [];
  const values: Record<string, unknown> = {};
  for (const field of Object.keys(input)) {
    if (!clientFields.includes(field)) errors.push({ field, message: 'is not a field that can be changed' });
  }
  for (const field of clientFields) {
    const present = Object.prototype.hasOwnProperty.call(input, field) && input[field] !== undefined;
    if (!present && mode === 'patch') continue;
    const value =
      !present || input[field] === null
        ? { field, message: mode === 'patch' ? 'is required and cannot be removed' : 'is required' }
        : declaration[field].parse!(field, input[field]);
    if (isFieldError(value)) errors.push(value);
    else values[field] = value;
  }
  if (errors.length > 0) throw new ValidationError(errors);
  return values;
}
