import { ApiProperty } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { AS_OF_PATTERN } from '@chronicle/application';
import { CLIENT_FIELD_NAMES, USER_FIELD_NAMES, USER_FIELDS } from '@chronicle/domain';
import { POSITION_PATTERN } from '@chronicle/event-store';
import { declareFields, mergePatchSchema } from '../http/openapi';
import { AuthenticatedQueryDto } from '../http/paging';

// The document's user schemas, built from the one declaration of a user's fields (USER_FIELDS).

/** A user's id, in its representation and in its path. */
export const USER_ID_SCHEMA = { type: 'string', format: 'uuid' } as const;

/** The full user representation. */
export class UserDto {
  @ApiProperty(USER_ID_SCHEMA)
  id!: string;
}
declareFields(UserDto.prototype, USER_FIELDS, USER_FIELD_NAMES, true);

/** The fragment representation: the members the patch named, with their new values, and modifiedon. */
export class UserFragmentDto {}
declareFields(UserFragmentDto.prototype, USER_FIELDS, CLIENT_FIELD_NAMES, false);
declareFields(UserFragmentDto.prototype, USER_FIELDS, ['modifiedon'], true);

/** A merge patch: any of the fields a client sets, and nothing else (the aggregate refuses the rest). */
export const USER_PATCH_SCHEMA = mergePatchSchema(
  USER_FIELDS,
  CLIENT_FIELD_NAMES,
  'null is refused: the field is required.',
);

export const AS_OF_MESSAGE =
  'asOf must be an RFC 3339 time such as 2026-11-22T09:15:00Z, or a position such as 42';

/** GET /users/{id}: as it is now, or as it was at `asOf`. */
export class GetUserQueryDto extends AuthenticatedQueryDto {
  @IsOptional()
  @IsString()
  @Matches(AS_OF_PATTERN, { message: AS_OF_MESSAGE })
  // The pattern's time is a date-time with its days counted (no February 30th).
  @JSONSchema({
    anyOf: [
      { type: 'string', format: 'date-time' },
      { type: 'string', pattern: `^(?:${POSITION_PATTERN})$` },
    ],
  })
  asOf?: string;
}
