import { ApiProperty } from '@nestjs/swagger';
import { CUSTOMER_CLIENT_FIELD_NAMES, CUSTOMER_FIELD_NAMES, CUSTOMER_FIELDS } from '@chronicle/domain';
import { declareFields, mergePatchSchema, newRecordSchema } from '../http/openapi';

// The document's customer schemas, built from the one declaration of a customer's fields.

/** A customer record. */
export class CustomerDto {
  @ApiProperty({ type: 'integer', minimum: 1, example: 42 })
  id!: number;
}
declareFields(CustomerDto.prototype, CUSTOMER_FIELDS, CUSTOMER_FIELD_NAMES, true);

/** POST /customers: every field a client sets, and nothing else. */
export const NEW_CUSTOMER_SCHEMA = newRecordSchema(CUSTOMER_FIELDS, CUSTOMER_CLIENT_FIELD_NAMES);

/** A merge patch: any of the fields a client sets, and nothing else (the aggregate refuses the rest). */
export const CUSTOMER_PATCH_SCHEMA = mergePatchSchema(
  CUSTOMER_FIELDS,
  CUSTOMER_CLIENT_FIELD_NAMES,
  'null is refused: the field is required.',
);
