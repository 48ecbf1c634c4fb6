import { ApiHideProperty } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Min } from 'class-validator';
import type { FastifyReply } from 'fastify';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/** Query DTOs of authenticated routes: `access_token` is a credential (read by the guard), not a filter. */
export class AuthenticatedQueryDto {
  @ApiHideProperty()
  @IsOptional()
  @IsString()
  access_token?: string;
}

/** The paging parameters every list shares; QueryValidationPipe checks them against these rules. */
export class PageQueryDto extends AuthenticatedQueryDto {
  @IsOptional()
  @IsInt({ message: 'page must be an integer' })
  @Min(1, { message: 'page must be 1 or more' })
  page?: number;

  @IsOptional()
  @IsInt({ message: 'maxpagesize must be an integer' })
  @Min(1, { message: 'maxpagesize must be 1 or more' })
  maxpagesize?: number;
}

/** The paging parameters' descriptions in the document, for a list of `things`. */
export const pageQueryDescriptions = (things: string) => ({
  page: 'Page to return, from 1; a page past the end is an empty list.',
  maxpagesize: `${things} per page (default ${DEFAULT_PAGE_SIZE}); values above ${MAX_PAGE_SIZE} are lowered to ${MAX_PAGE_SIZE}.`,
});

/** The paging headers' documentation, for a list of `things`. */
export const pageHeaders = (things: string) => ({
  Link: {
    description: 'RFC 8288 links: rel="next" and rel="prev" pages, other parameters kept.',
    schema: { type: 'string' },
  },
  'X-Total-Count': { description: `${things} in the list.`, schema: { type: 'integer', minimum: 0 } },
});

/** The page asked for and its size, the size lowered to the server's maximum. */
export function pageOf(query: PageQueryDto): { page: number; pageSize: number } {
  return { page: query.page ?? 1, pageSize: Math.min(query.maxpagesize ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE) };
}

/**
 * Sets `Link` (RFC 8288: next when another page exists, prev after page 1, the client's other
 * parameters kept) and `X-Total-Count` for a page of `count` items out of `total`.
 */
export function setPageHeaders(
  reply: FastifyReply,
  path: string,
  query: PageQueryDto,
  { count, total }: { count: number; total: number },
): void {
  const { page, pageSize } = pageOf(query);
  const hasNext = (page - 1) * pageSize + count < total;
  if (hasNext || page > 1) {
    const kept = keptParameters(query as Record<string, unknown>);
    const link = (to: number, rel: string) => `<${path}?${kept}page=${to}>; rel="${rel}"`;
    const next = hasNext ? link(page + 1, 'next') : '';
    const prev = page > 1 ? link(page - 1, 'prev') : '';
    void reply.header('link', next && prev ? `${next}, ${prev}` : next || prev);
  }
  void reply.header('x-total-count', String(total));
}

/**
 * The other parameters, by name, each followed by `&`: each is an integer by now, with nothing to
 * percent-encode. The access token is a credential, never written into a link. A plain loop: on
 * every page of every list, the chain of array copies it replaced was most of the headers' cost.
 */
function keptParameters(query: Record<string, unknown>): string {
  const names: string[] = [];
  for (const name of Object.keys(query)) {
    if (name !== 'page' && name !== 'access_token' && query[name] !== undefined) names.push(name);
  }
  names.sort();
  let kept = '';
  for (const name of names) kept += `${name}=${String(query[name])}&`;
  return kept;
}
