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
}
