import { validate } from 'class-validator';
import { plainToInstance } from 'class-transformer';
import type { FastifyReply } from 'fastify';
import {
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  PageQueryDto,
  pageHeaders,
  pageOf,
  pageQueryDescriptions,
  setPageHeaders,
} from './paging';

/** A reply that records the headers set on it. */
function recordingReply(): { reply: FastifyReply; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  const reply = {
    header(name: string, value: string) {
      headers[name] = value;
      return reply;
    },
  };
  return { reply: reply as unknown as FastifyReply, headers };
}

function headersFor(query: object, page: { count: number; total: number }) {
  const { reply, headers } = recordingReply();
  // Beside the paging parameters, a list's own filters, as its query DTO extends PageQueryDto.
  setPageHeaders(reply, '/users', query, page);
  return headers;
}

describe('pageOf', () => {
  it('is the first page of the default size without parameters', () => {
    expect(pageOf({})).toEqual({ page: 1, pageSize: DEFAULT_PAGE_SIZE });
    expect(DEFAULT_PAGE_SIZE).toBe(100);
  });

  it('keeps the page and a size up to the maximum', () => {
    expect(pageOf({ page: 3, maxpagesize: 7 })).toEqual({ page: 3, pageSize: 7 });
    expect(pageOf({ maxpagesize: MAX_PAGE_SIZE })).toEqual({ page: 1, pageSize: MAX_PAGE_SIZE });
  });

  it('lowers a size above the maximum to it', () => {
    expect(pageOf({ maxpagesize: MAX_PAGE_SIZE + 1 })).toEqual({ page: 1, pageSize: 1000 });
  });
});

describe('setPageHeaders', () => {
  it('sets only the total when the one page holds everything', () => {
    expect(headersFor({}, { count: 3, total: 3 })).toEqual({ 'x-total-count': '3' });
    expect(headersFor({}, { count: 0, total: 0 })).toEqual({ 'x-total-count': '0' });
  });

  it('links the next page from the first, keeping the other parameters by name', () => {
    expect(headersFor({ maxpagesize: 2, status: 'active' }, { count: 2, total: 5 })).toEqual({
      link: '</users?maxpagesize=2&status=active&page=2>; rel="next"',
      'x-total-count': '5',
    });
  });

  it('links both ways from a middle page, next first', () => {
    expect(headersFor({ page: 2, maxpagesize: 2 }, { count: 2, total: 5 })).toEqual({
      link: '</users?maxpagesize=2&page=3>; rel="next", </users?maxpagesize=2&page=1>; rel="prev"',
      'x-total-count': '5',
    });
  });

  it('links only back from the last page, and from a page past the end', () => {
    expect(headersFor({ page: 3, maxpagesize: 2 }, { count: 1, total: 5 })).toEqual({
      link: '</users?maxpagesize=2&page=2>; rel="prev"',
      'x-total-count': '5',
    });
    expect(headersFor({ page: 9, maxpagesize: 2 }, { count: 0, total: 5 }).link).toBe(
      '</users?maxpagesize=2&page=8>; rel="prev"',
    );
  });

  it('has no next page when this page ends exactly at the total', () => {
    expect(headersFor({ page: 2, maxpagesize: 2 }, { count: 2, total: 4 }).link).toBe(
      '</users?maxpagesize=2&page=1>; rel="prev"',
    );
    expect(headersFor({ maxpagesize: 2 }, { count: 2, total: 3 }).link).toBe(
      '</users?maxpagesize=2&page=2>; rel="next"',
    );
  });

  it('counts pages by the lowered size, and keeps the size the client sent', () => {
    const query = { page: 1, maxpagesize: 5000 };
    expect(headersFor(query, { count: 1000, total: 1500 }).link).toBe(
      '</users?maxpagesize=5000&page=2>; rel="next"',
    );
    expect(headersFor(query, { count: 1000, total: 1000 }).link).toBeUndefined();
  });

  it('sorts the kept parameters, and never writes the access token or an absent one into a link', () => {
    const query = { zeta: 1, alpha: 2, access_token: 'secret', unset: undefined, page: 1 };
    expect(headersFor(query, { count: 100, total: 101 }).link).toBe(
      '</users?alpha=2&zeta=1&page=2>; rel="next"',
    );
  });
});

describe('PageQueryDto', () => {
  const errors = async (query: Record<string, unknown>) =>
    (await validate(plainToInstance(PageQueryDto, query))).flatMap((error) =>
      Object.values(error.constraints ?? {}),
    );

  it('takes no parameters, or positive integers', async () => {
    expect(await errors({})).toEqual([]);
    expect(await errors({ page: 1, maxpagesize: 1, access_token: 'token' })).toEqual([]);
  });

  it('says what is wrong with each parameter', async () => {
    expect(await errors({ page: 0, maxpagesize: 1.5 })).toEqual([
      'page must be 1 or more',
      'maxpagesize must be an integer',
    ]);
    expect(await errors({ page: 'two', maxpagesize: 0 })).toEqual([
      'page must be 1 or more',
      'page must be an integer',
      'maxpagesize must be 1 or more',
    ]);
    expect(await errors({ access_token: 7 })).toEqual(['access_token must be a string']);
  });
});

describe('the paging documentation', () => {
  it('describes the parameters of a list of things', () => {
    expect(pageQueryDescriptions('Users')).toEqual({
      page: 'Page to return, from 1; a page past the end is an empty list.',
      maxpagesize: 'Users per page (default 100); values above 1000 are lowered to 1000.',
    });
  });

  it('describes the Link and X-Total-Count headers', () => {
    expect(pageHeaders('Customers')).toEqual({
      Link: {
        description: 'RFC 8288 links: rel="next" and rel="prev" pages, other parameters kept.',
        schema: { type: 'string' },
      },
      'X-Total-Count': { description: 'Customers in the list.', schema: { type: 'integer', minimum: 0 } },
    });
  });
});
