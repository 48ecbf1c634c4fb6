import { ApiProperty } from '@nestjs/swagger';
import { GRANTABLE_ROLES, NEW_ACCOUNT_FIELDS } from '@chronicle/domain';
import { newRecordSchema } from '../http/openapi';

/** POST /api/v1/accounts: the declared fields of a new account, the roles it is given, nothing else. */
export const NEW_ACCOUNT_SCHEMA = newRecordSchema(
  NEW_ACCOUNT_FIELDS,
  Object.keys(NEW_ACCOUNT_FIELDS) as (keyof typeof NEW_ACCOUNT_FIELDS)[],
  {
    roles: {
      type: 'array',
      items: { type: 'string', enum: [...GRANTABLE_ROLES] },
      maxItems: 1,
      uniqueItems: true,
      description: 'Absent or empty: a user. An auditor holds no other role.',
    },
  },
);

export class AccountCreatedDto {
  @ApiProperty({ format: 'uuid' })
  accountId!: string;

  @ApiProperty({ format: 'uuid' })
  userId!: string;
}
