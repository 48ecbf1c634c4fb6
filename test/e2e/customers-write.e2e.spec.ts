import { EventStore } from '@chronicle/event-store';
import { sendAs, startTestApp, TestAccount, TestApp } from './support/test-app';

const MERGE_PATCH = 'application/merge-patch+json';
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('POST, GET and PATCH /customers', () => {
  let subject: TestApp;
  let admin: TestAccount;
  let user: TestAccount;

  const send = (
    method: 'POST' | 'PATCH' | 'GET',
    path: string,
    body?: unknown,
    {
      as = admin,
      ...options
    }: { as?: TestAccount; contentType?: string; headers?: Record<string, string> } = {},
  ) => sendAs(as, `${subject.url}${path}`, method, body, options);
  const create = async (name: string, email: string) => {
    const response = await send('POST', '/customers', { name, email });
    expect(response.status).toBe(201);
    return {
      body: (await response.json()) as { id: number; name: string; email: string; createdon: string },
      response,
    };
  };
  const streamEvents = async (id: number) =>
    (await subject.app.get(EventStore).readStream(`customer-${id}`)).map((event) => event.type);
  const listed = async (id: number) => {
    await subject.settle();
    const response = await send('GET', `/customers?gt=${id - 1}&lt=${id + 1}`);
    return ((await response.json()) as unknown[])[0];
  };

  beforeAll(async () => {
    subject = await startTestApp();
    [admin, user] = await Promise.all([subject.createAccount({ admin: true }), subject.createAccount()]);
    await subject.seedCustomers(3);
  });
  afterAll(() => subject.destroy());

  describe('POST /customers', () => {
    it('registers the next customer number, answering 201 with Location and the record', async () => {
      const { body, response } = await create('  Ada Lovelace ', 'ada@example.com');
      expect(body).toEqual({
        id: 4,
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        createdon: expect.stringMatching(TIMESTAMP),
      });
      expect(Object.keys(body)).toEqual(['id', 'name', 'email', 'createdon']);
      expect(response.headers.get('location')).toBe('/customers/4');
      expect(response.headers.get('etag')).toBe('"0"');
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const next = await create('Grace Hopper', 'grace@example.com');
      expect(next.body.id).toBe(5);
      expect(await streamEvents(4)).toEqual(['CustomerRegistered.v1']);
      expect(await listed(4)).toEqual(body);
    });

    it('is for admins only (403), and refuses anonymous callers (401)', async () => {
      expect(
        (await send('POST', '/customers', { name: 'A', email: 'a@example.com' }, { as: user })).status,
      ).toBe(403);
      const anonymous = await fetch(`${subject.url}/customers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"name":"A","email":"a@example.com"}',
      });
      expect(anonymous.status).toBe(401);
    });

    it.each([
      [{ name: '', email: 'a@example.com' }, ['name']],
      [{ name: 'Ada', email: 'ada' }, ['email']],
      [{ name: 'Ada' }, ['email']],
      [{ name: 'Ada', email: 'a@example.com', id: 9 }, ['id']],
      [{ name: null, email: 'a@example.com', __proto__x: 1 }, ['__proto__x', 'name']],
    ])('refuses %j with 422, naming the fields, and spends no number', async (body, fields) => {
      const response = await send('POST', '/customers', body);
      expect(response.status).toBe(422);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = (await response.json()) as { errors: { field: string }[] };
      expect(problem.errors.map((error) => error.field).sort()).toEqual(fields);
      const { body: next } = await create('After', `after-${Date.now()}-${Math.random()}@example.com`);
      const { body: again } = await create('Again', `again-${Date.now()}-${Math.random()}@example.com`);
      expect(again.id).toBe(next.id + 1);
    });

    it('answers 400 for a body that is not an object and 415 for a body that is not JSON', async () => {
      expect((await send('POST', '/customers', [])).status).toBe(400);
      expect((await send('POST', '/customers', 'null')).status).toBe(400);
      const merge = await send(
        'POST',
        '/customers',
        { name: 'A', email: 'a@example.com' },
        { contentType: MERGE_PATCH },
      );
      expect(merge.status).toBe(415);
      expect((await send('POST', '/customers', 'name=A', { contentType: 'text/plain' })).status).toBe(415);
    });
  });

  describe('GET /customers/{id}', () => {
    it('answers the record with its ETag to any account that may read the list, and 304 while it is current', async () => {
      const { body } = await create('Barbara Liskov', 'barbara@example.com');
      const response = await send('GET', `/customers/${body.id}`, undefined, { as: user });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(body);
      expect(response.headers.get('etag')).toBe('"0"');
      const cached = await send('GET', `/customers/${body.id}`, undefined, {
        as: user,
        headers: { 'if-none-match': 'W/"0"' },
      });
      expect(cached.status).toBe(304);
      expect(cached.headers.get('etag')).toBe('"0"');
      const stale = await send('GET', `/customers/${body.id}`, undefined, {
        headers: { 'if-none-match': '"7"' },
      });
      expect(stale.status).toBe(200);
    });

    it('answers 400 for a query parameter it does not take', async () => {
      const response = await send('GET', '/customers/1?expand=all');
      expect(response.status).toBe(400);
      expect(((await response.json()) as { errors: { field: string }[] }).errors).toEqual([
        { field: 'expand', message: 'expand is not a parameter of this endpoint' },
      ]);
    });

    it.each(['999999', 'abc', '0', '-1', '1.5'])('answers 404 for customer %s', async (id) => {
      const response = await send('GET', `/customers/${id}`);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });
  });

  describe('PATCH /customers/{id}', () => {
    it('changes the named fields, answering the record with its new ETag, read back at once', async () => {
      const { body } = await create('Edsger', 'edsger@example.com');
      const response = await send('PATCH', `/customers/${body.id}`, { email: ' ewd@example.com ' });
      expect(response.status).toBe(200);
      expect(response.headers.get('etag')).toBe('"1"');
      const changed = { ...body, email: 'ewd@example.com' };
      expect(await response.json()).toEqual(changed);
      // Read your writes: answered from the stream, not the (possibly lagging) read model.
      const read = await send('GET', `/customers/${body.id}`);
      expect(await read.json()).toEqual(changed);
      expect(read.headers.get('etag')).toBe('"1"');
      expect(await streamEvents(body.id)).toEqual(['CustomerRegistered.v1', 'CustomerChanged.v1']);
      // The list follows through the projection, on both shapes.
      expect(await listed(body.id)).toEqual(changed);
    });

    it('writes nothing for a patch that changes nothing', async () => {
      const { body } = await create('Frances', 'frances@example.com');
      const response = await send('PATCH', `/customers/${body.id}`, { name: 'Frances' });
      expect(response.status).toBe(200);
      expect(response.headers.get('etag')).toBe('"0"');
      expect(await streamEvents(body.id)).toEqual(['CustomerRegistered.v1']);
    });

    it('honours If-Match: a stale ETag is 412 and changes nothing, the current one applies', async () => {
      const { body } = await create('Claude', 'claude@example.com');
      const stale = await send(
        'PATCH',
        `/customers/${body.id}`,
        { name: 'X' },
        { headers: { 'if-match': '"3"' } },
      );
      expect(stale.status).toBe(412);
      expect(await streamEvents(body.id)).toEqual(['CustomerRegistered.v1']);
      const current = await send(
        'PATCH',
        `/customers/${body.id}`,
        { name: 'Claude S.' },
        { headers: { 'if-match': '"0"' } },
      );
      expect(current.status).toBe(200);
      expect(((await current.json()) as { name: string }).name).toBe('Claude S.');
    });

    it('answers 415 with Accept-Patch for a body that is not a merge patch', async () => {
      const { body } = await create('Ivan', 'ivan@example.com');
      const response = await send(
        'PATCH',
        `/customers/${body.id}`,
        { name: 'Y' },
        { contentType: 'application/json' },
      );
      expect(response.status).toBe(415);
      expect(response.headers.get('accept-patch')).toBe(MERGE_PATCH);
    });

    it.each([
      [{ name: null }, 'name'],
      [{ email: null }, 'email'],
      [{ id: 1 }, 'id'],
      [{ createdon: '2026-01-01T00:00:00.000Z' }, 'createdon'],
      [{ email: 'not an address' }, 'email'],
    ])('refuses %j with 422 and changes nothing', async (patch, field) => {
      const { body } = await create('Katherine', `k-${Date.now()}-${Math.random()}@example.com`);
      const response = await send('PATCH', `/customers/${body.id}`, patch);
      expect(response.status).toBe(422);
      expect(((await response.json()) as { errors: { field: string }[] }).errors.map((e) => e.field)).toEqual(
        [field],
      );
      expect(await streamEvents(body.id)).toEqual(['CustomerRegistered.v1']);
    });

    it('is for admins only, answers 404 for an unknown customer and 400 for a body that is not an object', async () => {
      const { body } = await create('Linus', 'linus@example.com');
      expect((await send('PATCH', `/customers/${body.id}`, { name: 'L' }, { as: user })).status).toBe(403);
      expect((await send('PATCH', '/customers/999999', { name: 'L' })).status).toBe(404);
      expect((await send('PATCH', `/customers/${body.id}`, [1])).status).toBe(400);
    });
  });
});
