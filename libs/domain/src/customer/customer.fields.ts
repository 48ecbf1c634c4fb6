import {
  ClientFieldNameOf,
  clientFieldsOf,
  EMAIL_FIELD,
  FieldDeclaration,
  NAME_FIELD,
  parseDeclaredFields,
  pickFields,
  ValuesOf,
} from '../shared/fields';

/**
 * The one declaration of a customer's fields, in the order a customer record lists them. The
 * aggregate and its events, POST and PATCH /customers' validation, the API's document, the
 * customers projection and every read store's document (the columns' JSON included) take their
 * field list from here.
 */
export const CUSTOMER_FIELDS = {
  name: NAME_FIELD,
  email: EMAIL_FIELD,
  createdon: { type: 'string', schema: { format: 'date-time' } },
} as const satisfies Record<string, FieldDeclaration>;

export type CustomerFieldName = keyof typeof CUSTOMER_FIELDS;
export type CustomerFields = ValuesOf<typeof CUSTOMER_FIELDS>;
/** The fields a client sets: on creation, and in a patch. */
export type CustomerClientFieldName = ClientFieldNameOf<typeof CUSTOMER_FIELDS>;
export type CustomerClientFields = Pick<CustomerFields, CustomerClientFieldName>;

export const CUSTOMER_FIELD_NAMES = Object.keys(CUSTOMER_FIELDS) as CustomerFieldName[];
export const CUSTOMER_CLIENT_FIELD_NAMES = clientFieldsOf(CUSTOMER_FIELDS) as CustomerClientFieldName[];

/** A customer record as every reader sees it: its id, then its fields. */
export type CustomerRepresentation = { id: number } & CustomerFields;

/** The declared fields of `source` that hold a value, in declaration order, and nothing else. */
export function pickCustomerFields<F extends CustomerFieldName>(
  source: Partial<Record<F, unknown>>,
  fields: readonly F[] = CUSTOMER_FIELD_NAMES as F[],
): Partial<Pick<CustomerFields, F>> {
  return pickFields<CustomerFields, F>(source, fields);
}

/** Parses a new customer (`all`) or a merge patch on one (`patch`); see parseDeclaredFields. */
export function parseCustomerFields(input: Record<string, unknown>, mode: 'all'): CustomerClientFields;
export function parseCustomerFields(
  input: Record<string, unknown>,
  mode: 'patch',
): Partial<CustomerClientFields>;
export function parseCustomerFields(
  input: Record<string, unknown>,
  mode: 'all' | 'patch',
): Partial<CustomerClientFields> {
  return parseDeclaredFields(CUSTOMER_FIELDS, input, mode);
}

/** What a reader is shown of a customer (or of a stored document): its id and its fields, in order. */
export function customerRepresentation(
  source: { id: number } & Partial<CustomerFields>,
): CustomerRepresentation {
  return { id: source.id, ...pickCustomerFields(source) } as CustomerRepresentation;
}
