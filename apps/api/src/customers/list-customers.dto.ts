import { ApiHideProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

const INTEGER = /^-?\d{1,15}$/;

/** Digits only (with an optional sign): "1.5", "1e3", " 7" and "" stay strings and fail IsInt. */
const toInteger = ({ value }: { value: unknown }) =>
  typeof value === 'string' && INTEGER.test(value) ? Number(value) : value;

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

const LIST_CUSTOMERS_PARAMETERS = new Set(['page', 'gt', 'lt', 'maxpagesize', 'access_token']);

/**
 * The query as ListCustomersQueryDto would make it, decided without class-validator, for the
 * common case only: known parameters, each given once, integers in range. Null for anything
 * else, which the DTO then judges and explains (a unit test holds the two to agreement).
 */
export function wellFormedListCustomersQuery(query: unknown): ListCustomersQueryDto | null {
  const result: ListCustomersQueryDto = {};
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
    if (!LIST_CUSTOMERS_PARAMETERS.has(name) || typeof value !== 'string') return null;
    if (name === 'access_token') {
      result.access_token = value;
      continue;
    }
    if (!INTEGER.test(value)) return null;
    const number = Number(value);
    if ((name === 'page' || name === 'maxpagesize') && number < 1) return null;
    result[name as 'page' | 'gt' | 'lt' | 'maxpagesize'] = number;
  }
  return result;
}
