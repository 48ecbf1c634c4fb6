import { ApiProperty } from '@nestjs/swagger';

export class ProjectionStatusDto {
  @ApiProperty({ example: 'customers' })
  name!: string;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'null' }],
    example: '1040',
    description: 'Last event applied.',
  })
  checkpoint!: string | null;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    example: 2,
    description: 'Events in the store after the checkpoint.',
  })
  lag!: number;

  @ApiProperty({ description: 'False when the count stopped at its cap: the lag is at least `lag`.' })
  lagExact!: boolean;

  @ApiProperty({
    minimum: 0,
    example: 0.8,
    description: 'How long the oldest event not yet applied has waited, in seconds; 0 when caught up.',
  })
  lagSeconds!: number;
}

export class ParkedMessageDto {
  @ApiProperty({ example: 'saga:password', description: 'The processor that parked it.' })
  processor!: string;

  @ApiProperty({ format: 'uuid' })
  eventId!: string;

  @ApiProperty({ example: 'resetrequest-9f86d0…' })
  stream!: string;

  @ApiProperty({ example: 'PasswordResetRequested.v2' })
  type!: string;

  @ApiProperty({ example: '1040' })
  position!: string;

  @ApiProperty({
    example: 'The mail server refused the message: 550 5.1.1 Mailbox unavailable',
    description: 'The permanent failure, or the last of too many transient ones.',
  })
  reason!: string;

  @ApiProperty({ type: 'integer', minimum: 1 })
  attempts!: number;

  @ApiProperty({ format: 'date-time' })
  parkedAt!: string;
}

export class ProjectionsStatusDto {
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'null' }],
    example: '1042',
    description: 'The newest event.',
  })
  head!: string | null;

  @ApiProperty({ type: [ProjectionStatusDto] })
  projections!: ProjectionStatusDto[];

  @ApiProperty({ type: [ProjectionStatusDto], description: 'The sagas, each with its own checkpoint.' })
  sagas!: ProjectionStatusDto[];

  @ApiProperty({
    type: [ParkedMessageDto],
    description:
      'Messages a processor gave up on, oldest first; `projections parked retry|drop` settles them.',
  })
  parked!: ParkedMessageDto[];
}
