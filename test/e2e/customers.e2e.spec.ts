import { ReadStore } from '@chronicle/read-models';
import { basic, startTestApp, TestAccount, TestApp } from './support/test-app';

describe('GET /customers', () => {
  let subject: TestApp;
  let account: TestAccount;
  const get = (query = '') =>
    fetch(`${subject.url}/customers${query}`, { headers: { authorization: basic(account) } });
  const ids = async (response: Response) =>
    ((await response.json()) as { id: number }[]).map((customer) => customer.id);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  beforeAll(async () => {
    subject = await startTestApp();
    account = await subject.createAccount();
    await subject.seedCustomers(250);
  });
  afterAll(() => subject.destroy());

  it('returns page 1 of 100 customers sorted by id, with the total and a next link', async () => {
    const response = await get();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-total-count')).toBe('250');
    expect(response.headers.get('link')).toBe('</customers?page=2>; rel="next"');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>[];
    expect(body.map((customer) => customer.id)).toEqual(range(1, 100));
    expect(Object.keys(body[0]).sort()).toEqual(['createdon', 'email', 'id', 'name']);
    expect(body[0].createdon).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('pages from 1 with maxpagesize, linking prev and next and keeping the other parameters', async () => {
    const response = await get('?gt=10&maxpagesize=20&page=3');
    expect(await ids(response)).toEqual(range(51, 70));
    expect(response.headers.get('x-total-count')).toBe('240');
    expect(response.headers.get('link')).toBe(
      '</customers?gt=10&maxpagesize=20&page=4>; rel="next", </customers?gt=10&maxpagesize=20&page=2>; rel="prev"',
    );
  });

  it('treats gt and lt as exclusive bounds', async () => {
    const response = await get('?gt=5&lt=9');
    expect(await ids(response)).toEqual([6, 7, 8]);
    expect(response.headers.get('x-total-count')).toBe('3');
    expect(response.headers.get('link')).toBeNull();
  });

  it('gives an empty page for gt >= lt and for a page past the end', async () => {
    for (const query of ['?gt=9&lt=9', '?gt=10&lt=3']) {
      const response = await get(query);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual([]);
      expect(response.headers.get('x-total-count')).toBe('0');
    }
    const past = await get('?page=99');
    expect(past.status).toBe(200);
    expect(await past.json()).toEqual([]);
    expect(past.headers.get('x-total-count')).toBe('250');
    expect(past.headers.get('link')).toBe('</customers?page=98>; rel="prev"');
  });

  it('lowers maxpagesize above 1000 to 1000', async () => {
    await subject.seedCustomers(1000);
    const response = await get('?maxpagesize=5000');
    expect((await ids(response)).length).toBe(1000);
    expect(response.headers.get('link')).toBe('</customers?maxpagesize=5000&page=2>; rel="next"');
  });

  it.each([
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=abc', 'page'],
    ['page=1.5', 'page'],
    ['page=', 'page'],
    ['page=1e2', 'page'],
    ['maxpagesize=0', 'maxpagesize'],
    ['maxpagesize=ten', 'maxpagesize'],
    ['gt=x', 'gt'],
    ['lt=2.5', 'lt'],
    ['gt=1&gt=2', 'gt'],
    ['sort=name', 'sort'],
  ])('answers 400 problem details for ?%s', async (query, field) => {
    const response = await get(`?${query}`);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await response.json()) as { type: string; status: number; errors: { field: string }[] };
    expect(problem.status).toBe(400);
    expect(problem.errors.map((error) => error.field)).toContain(field);
  });

  it('answers a failure of the read store with problem details', async () => {
    const failing = jest
      .spyOn(subject.app.get(ReadStore), 'listCustomersJson')
      .mockRejectedValueOnce(new Error('read store down'));
    try {
      const response = await get('?maxpagesize=5');
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await response.json()).toMatchObject({ status: 500 });
      expect(response.headers.get('x-request-id')).toBeTruthy();
    } finally {
      failing.mockRestore();
    }
  });
});
