import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class UserDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ minLength: 1, maxLength: 200 })
  name!: string;

  @ApiProperty({ type: 'integer', minimum: 0, maximum: 150 })
  age!: number;

  @ApiProperty({ format: 'date-time' })
  createdon!: string;

  @ApiProperty({ format: 'date-time' })
  modifiedon!: string;
}

/** The fragment representation: the members the patch named, with their new values, and modifiedon. */
export class UserFragmentDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  name?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 150 })
  age?: number;

  @ApiProperty({ format: 'date-time' })
  modifiedon!: string;
}

export class UserPatchDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: 'Trimmed; null is refused.' })
  name?: string;

  @ApiPropertyOptional({ minimum: 0, maximum: 150, type: 'integer', description: 'null is refused.' })
  age?: number;
}
