import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { DEFAULT_AUDIT_LIMIT, MAX_AUDIT_LIMIT } from '@chronicle/application';
import { AuthenticatedQueryDto } from '../customers/list-customers.dto';

/** 1 to MAX_AUDIT_LIMIT (1000), as digits. */
export const AUDIT_LIMIT = /^0*(?:[1-9]\d{0,2}|1000)$/;

export class ListAuditEventsQueryDto extends AuthenticatedQueryDto {
  @ApiPropertyOptional({
    description: 'Only this stream.',
    example: 'user-1b4e28ba-2fa1-11d2-883f-0016d3cca427',
  })
  @IsOptional()
  @IsString()
  @Length(1, 300)
  stream?: string;

  @ApiPropertyOptional({ description: 'Only this event type.', example: 'UserPatched.v1' })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z][A-Za-z0-9]*\.v\d{1,6}$/, {
    message: 'type must be an event type such as UserPatched.v1',
  })
  type?: string;

  @ApiPropertyOptional({ description: 'Only events caused by this account id, or `system`.' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  actor?: string;

  @ApiPropertyOptional({ description: 'Only events after this position (exclusive), e.g. from a next link.' })
  @IsOptional()
  @IsString()
  @Matches(/^\d{1,20}(:\d{1,20})?$/, { message: 'after must be a position such as 42 or 42:40' })
  after?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_AUDIT_LIMIT,
    default: DEFAULT_AUDIT_LIMIT,
  })
  @IsOptional()
  @Matches(AUDIT_LIMIT, { message: `limit must be an integer from 1 to ${MAX_AUDIT_LIMIT}` })
  limit?: string;
}

export class AuditRecordDto {
  @ApiProperty({ example: '1042', description: 'Position in the global log; pass it as `after`.' })
  position!: string;

  @ApiProperty({ example: 'user-1b4e28ba-2fa1-11d2-883f-0016d3cca427' })
  stream!: string;

  @ApiProperty({ example: 3 })
  revision!: number;

  @ApiProperty({ example: 'UserPatched.v1' })
  type!: string;

  @ApiProperty({ example: '2026-11-22T09:15:00.000Z', format: 'date-time' })
  occurredAt!: string;

  @ApiProperty({ description: 'The account id that caused the event, or `system`.' })
  actor!: string;

  @ApiProperty({ description: 'The X-Request-Id of the request that started the work.' })
  correlationId!: string;

  @ApiProperty({ type: String, nullable: true, description: 'The event or command that caused this one.' })
  causationId!: string | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The event data; password and token hashes are "[redacted]".',
  })
  data!: Record<string, unknown>;
}
