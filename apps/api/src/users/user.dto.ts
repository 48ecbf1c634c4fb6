import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class UserDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ minLength: 1, maxLength: 200 })
  name!: string;

  @ApiProperty({ minimum: 0, maximum: 150 })
  age!: number;

  @ApiProperty({ format: 'date-time' })
  createdon!: string;

  @ApiProperty({ format: 'date-time' })
  modifiedon!: string;
}

export class UserPatchDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: 'Trimmed; null is refused.' })
  name?: string;

  @ApiPropertyOptional({ minimum: 0, maximum: 150, type: 'integer', description: 'null is refused.' })
  age?: number;
}
