import {
  ClientFieldNameOf,
  clientFieldsOf,
  EMAIL_FIELD,
  FieldDeclaration,
  NAME_FIELD,
  parseDeclaredFields,
  ValuesOf,
} from '../shared/fields';

/**
 * The one declaration of a customer's fields, in the order a customer record lists them. The
 * aggregate, POST and PATCH /customers' validation and the API's document take them from here.
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
