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
  // The other parameters, by name: each is an integer by now, with nothing to percent-encode.
  // The access token is a credential, never written into a link.
  const kept = Object.entries(query as Record<string, unknown>)
    .filter(([name, value]) => name !== 'page' && name !== 'access_token' && value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${String(value)}&`)
    .join('');
  const link = (to: number, rel: string) => `<${path}?${kept}page=${to}>; rel="${rel}"`;
  const links: string[] = [];
  if ((page - 1) * pageSize + count < total) links.push(link(page + 1, 'next'));
  if (page > 1) links.push(link(page - 1, 'prev'));
  if (links.length > 0) void reply.header('link', links.join(', '));
  void reply.header('x-total-count', String(total));
}
