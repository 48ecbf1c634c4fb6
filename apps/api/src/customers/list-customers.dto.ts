import { ApiHideProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

const INTEGER = /^-?\d+$/;

/**
 * Digits only (with an optional sign): "1.5", "1e3", " 7" and "" stay strings and fail IsInt.
 * Any integer is valid (API.md); one beyond ±2^53 is held at that bound, which no id or page
 * reaches, so the answer is the same and nothing downstream meets an unsafe number.
 */
const toInteger = ({ value }: { value: unknown }) =>
  typeof value === 'string' && INTEGER.test(value)
    ? Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Number(value)))
    : value;

/** Query DTOs of authenticated routes: `access_token` is a credential (read by the guard), not a filter. */
export class AuthenticatedQueryDto {
  @ApiHideProperty()
  @IsOptional()
  @IsString()
  access_token?: string;
}

export class ListCustomersQueryDto extends AuthenticatedQueryDto {
  @ApiPropertyOptional({ description: 'Page to return, from 1.', minimum: 1, default: 1 })
  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: 'page must be an integer' })
  @Min(1)
  page?: number;

  @ApiPropertyOptional({ description: 'Only customers whose id is greater than this (exclusive).' })
  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: 'gt must be an integer' })
  gt?: number;

  @ApiPropertyOptional({ description: 'Only customers whose id is less than this (exclusive).' })
  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: 'lt must be an integer' })
  lt?: number;

  @ApiPropertyOptional({
    description: `Customers per page; values above ${MAX_PAGE_SIZE} are lowered to ${MAX_PAGE_SIZE}.`,
    minimum: 1,
    default: DEFAULT_PAGE_SIZE,
  })
  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: 'maxpagesize must be an integer' })
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  maxpagesize?: number;
}
