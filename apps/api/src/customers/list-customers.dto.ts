import { ApiHideProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/** Any integer, digits only with an optional sign: `1.5`, `1e3`, ` 7` and `` are not. */
export const INTEGER = /^-?\d+$/;
/** An integer of 1 or more. */
export const POSITIVE_INTEGER = /^0*[1-9]\d*$/;

/**
 * A checked integer parameter as a number. Any integer is valid (API.md); one beyond ±2^53 is held
 * at that bound, which no id or page reaches, so the answer is the same and nothing downstream
 * meets an unsafe number.
 */
export function integerParameter(value: string): number {
  return Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Number(value)));
}

/** Query DTOs of authenticated routes: `access_token` is a credential (read by the guard), not a filter. */
export class AuthenticatedQueryDto {
  @ApiHideProperty()
  @IsOptional()
  @IsString()
  access_token?: string;
}

/** GET /customers' parameters as they arrive: strings, checked against these rules. */
export class ListCustomersQueryDto extends AuthenticatedQueryDto {
  @ApiPropertyOptional({ description: 'Page to return, from 1.', type: 'integer', minimum: 1, default: 1 })
  @IsOptional()
  @Matches(POSITIVE_INTEGER, { message: 'page must be an integer of 1 or more' })
  page?: string;

  @ApiPropertyOptional({
    description: 'Only customers whose id is greater than this (exclusive).',
    type: 'integer',
  })
  @IsOptional()
  @Matches(INTEGER, { message: 'gt must be an integer' })
  gt?: string;

  @ApiPropertyOptional({
    description: 'Only customers whose id is less than this (exclusive).',
    type: 'integer',
  })
  @IsOptional()
  @Matches(INTEGER, { message: 'lt must be an integer' })
  lt?: string;

  @ApiPropertyOptional({
    description: `Customers per page; values above ${MAX_PAGE_SIZE} are lowered to ${MAX_PAGE_SIZE}.`,
    type: 'integer',
    minimum: 1,
    default: DEFAULT_PAGE_SIZE,
  })
  @IsOptional()
  @Matches(POSITIVE_INTEGER, { message: 'maxpagesize must be an integer of 1 or more' })
  maxpagesize?: string;
}

/** The checked parameters, typed. */
export interface CustomerListParameters {
  page: number;
  pageSize: number;
  gt?: number;
  lt?: number;
  /** As the client gave it, for the paging links. */
  maxpagesize?: number;
}

export function customerListParameters(query: ListCustomersQueryDto): CustomerListParameters {
  const maxpagesize = query.maxpagesize === undefined ? undefined : integerParameter(query.maxpagesize);
  return {
    page: query.page === undefined ? 1 : integerParameter(query.page),
    pageSize: Math.min(maxpagesize ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
    gt: query.gt === undefined ? undefined : integerParameter(query.gt),
    lt: query.lt === undefined ? undefined : integerParameter(query.lt),
    maxpagesize,
  };
}
