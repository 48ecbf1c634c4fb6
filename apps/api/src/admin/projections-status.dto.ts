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

export class ProjectionsStatusDto {
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'null' }],
    example: '1042',
    description: 'The newest event.',
  })
  head!: string | null;

  @ApiProperty({ type: [ProjectionStatusDto] })
  projections!: ProjectionStatusDto[];

  @ApiProperty({ type: [ProjectionStatusDto], description: 'Each saga, by the events it has handled.' })
  sagas!: ProjectionStatusDto[];
}
