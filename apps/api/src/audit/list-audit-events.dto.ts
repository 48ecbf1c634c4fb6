import { ApiProperty } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { MAX_AUDIT_LIMIT, RFC_3339 } from '@chronicle/application';
import { POSITION_PATTERN } from '@chronicle/event-store';
import { AuthenticatedQueryDto } from '../http/paging';

const EVENT_TYPE = /^[A-Za-z][A-Za-z0-9]*\.v\d{1,6}$/;
/** Several types at once, but not without bound: each is a term of one query. */
export const MAX_TYPES = 20;

/** Which days a month has, beside RFC_3339's shape: JSON schema's date-time. */
const DATE_TIME = { format: 'date-time' };

export class ListAuditEventsQueryDto extends AuthenticatedQueryDto {
  @IsOptional()
  @IsString()
  @Length(1, 300)
  stream?: string;

  // Repeatable: one value is a string, several an array (Fastify's query parser).
  @IsOptional()
  @JSONSchema({
    anyOf: [
      { type: 'string', pattern: EVENT_TYPE.source },
      {
        type: 'array',
        items: { type: 'string', pattern: EVENT_TYPE.source },
        minItems: 1,
        maxItems: MAX_TYPES,
      },
    ],
  })
  type?: string | string[];

  @IsOptional()
  @IsString()
  @Length(1, 200)
  correlationId?: string;

  @IsOptional()
  @IsString()
  @Matches(RFC_3339, { message: 'since must be an RFC 3339 time such as 2026-11-22T09:15:00Z' })
  @JSONSchema(DATE_TIME)
  since?: string;

  @IsOptional()
  @IsString()
  @Matches(RFC_3339, { message: 'until must be an RFC 3339 time such as 2026-11-22T09:15:00Z' })
  @JSONSchema(DATE_TIME)
  until?: string;

  @IsOptional()
  @IsString()
  @Length(1, 200)
  actor?: string;

  @IsOptional()
  @IsString()
  @Matches(new RegExp(`^(?:${POSITION_PATTERN})$`), {
    message: 'after must be a position such as 42 or 42:40',
  })
  after?: string;

  @IsOptional()
  @IsString()
  @Matches(/^(true|false)$/, { message: 'withChain must be true or false' })
  withChain?: string;

  @IsOptional()
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: `limit must be from 1 to ${MAX_AUDIT_LIMIT}` })
  @Max(MAX_AUDIT_LIMIT, { message: `limit must be from 1 to ${MAX_AUDIT_LIMIT}` })
  limit?: number;
}

export class AuthProvenanceDto {
  @ApiProperty({ enum: ['basic', 'bearer', 'none', 'cli', 'system'] })
  method!: 'basic' | 'bearer' | 'none' | 'cli' | 'system';

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'null' }],
    description: 'The id of the access token used (never the token); null unless bearer.',
  })
  tokenId!: string | null;
}

export class AuditRecordDto {
  @ApiProperty({
    format: 'uuid',
    description: "The event's own id, which `causationId` and `requestId` refer to.",
  })
  id!: string;

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

  @ApiProperty({
    example: '2026-11-22T09:15:00.012Z',
    format: 'date-time',
    description: 'Assigned by the event store when it wrote the event; never decreases with position.',
  })
  recordedAt!: string;

  @ApiProperty({ description: 'The account id that caused the event, or `system`.' })
  actor!: string;

  @ApiProperty({ description: 'The id the server gave the request (or CLI run) that started the work.' })
  correlationId!: string;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'null' }],
    description: 'The event or command that caused this one.',
  })
  causationId!: string | null;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'null' }],
    description: "The client's own X-Request-Id, recorded as sent; never a correlation id.",
  })
  clientRequestId!: string | null;

  @ApiProperty({
    oneOf: [{ $ref: '#/components/schemas/AuthProvenanceDto' }, { type: 'null' }],
    description: 'How the writer authenticated; null on events written before this was recorded.',
  })
  auth!: AuthProvenanceDto | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The event data; password and token hashes are "[redacted]".',
  })
  data!: Record<string, unknown>;

  @ApiProperty({
    pattern: '^[0-9a-f]{64}$',
    description:
      'SHA-256 chaining the event to its predecessor; `audit verify` checks the chain. What it covers: ' +
      'docs/audit-integrity.md.',
  })
  hash!: string;

  @ApiProperty({
    required: false,
    description:
      'Only on an event whose stored hash does not follow from what is stored of it and its predecessor: why. ' +
      'The history was edited outside the service at this event.',
  })
  chainBroken?: string;

  @ApiProperty({
    required: false,
    enum: [true],
    description:
      "Only when the event's subject was erased (DELETE /users/{id}, /customers/{id}): its personal values " +
      'in `data` are null. The chain still verifies: it covers what is stored, the ciphertext.',
  })
  erased?: true;

  @ApiProperty({
    required: false,
    oneOf: [{ type: 'string' }, { type: 'null' }],
    description:
      'Only with withChain=true: the text whose SHA-256 (hex, of its UTF-8 bytes) is `hash`, as the event and ' +
      'its predecessor are stored now (docs/audit-integrity.md); null when the stored data holds a secret.',
  })
  chained?: string | null;
}

export class VerifyAuditQueryDto extends AuthenticatedQueryDto {
  @IsOptional()
  @IsString()
  @Length(1, 2000)
  seal?: string;
}

export class HistoryHeadDto {
  @ApiProperty({ example: '1042' })
  position!: string;

  @ApiProperty({ pattern: '^[0-9a-f]{64}$' })
  hash!: string;

  @ApiProperty({ format: 'date-time' })
  recordedAt!: string;
}

class ChainBreakDto {
  @ApiProperty({ example: '17' })
  position!: string;

  @ApiProperty()
  stream!: string;

  @ApiProperty()
  revision!: number;

  @ApiProperty()
  reason!: string;
}

class SealCheckDto {
  @ApiProperty()
  position!: string;

  @ApiProperty()
  valid!: boolean;

  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'null' }] })
  problem!: string | null;

  @ApiProperty({
    required: false,
    description:
      'The seal holds as the old head a signed HistoryProtected.v1 recorded (`history protect` re-chained the ' +
      "history since): that record's position.",
  })
  protection?: string;
}

export class ChainVerificationDto {
  @ApiProperty({ description: 'The chain holds and, with a seal, the history still holds what it sealed.' })
  ok!: boolean;

  @ApiProperty({ description: 'Events walked, the broken one included.' })
  checked!: number;

  @ApiProperty({
    oneOf: [{ $ref: '#/components/schemas/HistoryHeadDto' }, { type: 'null' }],
    description: 'The head walked up to, what `audit seal` signs; null for an empty history.',
  })
  head!: HistoryHeadDto | null;

  @ApiProperty({
    required: false,
    type: ChainBreakDto,
    description: 'The first event whose hash does not follow.',
  })
  firstBroken?: ChainBreakDto;

  @ApiProperty({
    required: false,
    type: SealCheckDto,
    description: 'With a seal: whether it holds, and why not.',
  })
  seal?: SealCheckDto;
}
