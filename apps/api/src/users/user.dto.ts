import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { AS_OF_PATTERN } from '@chronicle/application';
import { CLIENT_FIELD_NAMES, USER_FIELD_NAMES, USER_FIELDS, UserFieldName } from '@chronicle/domain';
import { AuthenticatedQueryDto } from '../http/paging';

// The document's user schemas, built from the one declaration of a user's fields (USER_FIELDS).

const schemaOf = (field: UserFieldName) => ({ type: USER_FIELDS[field].type, ...USER_FIELDS[field].schema });

/** Declares `fields` on `dto` for the document, required or not, with a `note` added to each. */
function declare(dto: object, fields: readonly UserFieldName[], required: boolean, note?: string): void {
  const decorate = required ? ApiProperty : ApiPropertyOptional;
  for (const field of fields) {
    const schema: Record<string, unknown> = schemaOf(field);
    if (note) schema.description = [schema.description, note].filter(Boolean).join(' ');
    decorate(schema)(dto, field);
  }
}

/** The full user representation. */
export class UserDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;
}
declare(UserDto.prototype, USER_FIELD_NAMES, true);

/** The fragment representation: the members the patch named, with their new values, and modifiedon. */
export class UserFragmentDto {}
declare(UserFragmentDto.prototype, CLIENT_FIELD_NAMES, false);
declare(UserFragmentDto.prototype, ['modifiedon'], true);

/** A merge patch: any of the fields a client sets. */
export class UserPatchDto {}
declare(UserPatchDto.prototype, CLIENT_FIELD_NAMES, false, 'null is refused: the field is required.');

export const AS_OF_MESSAGE =
  'asOf must be an RFC 3339 time such as 2026-11-22T09:15:00Z, or a position such as 42';

/** GET /users/{id}: as it is now, or as it was at `asOf`. */
export class GetUserQueryDto extends AuthenticatedQueryDto {
  @IsOptional()
  @IsString()
  @Matches(AS_OF_PATTERN, { message: AS_OF_MESSAGE })
  asOf?: string;
}
