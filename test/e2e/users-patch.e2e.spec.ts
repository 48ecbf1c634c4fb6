import { basic, startTestApp, TestAccount, TestApp } from './support/test-app';

const MERGE_PATCH = 'application/merge-patch+json';
const USER = 'application/vnd.chronicle.user+json';
const FRAGMENT = 'application/vnd.chronicle.fragment+json';

describe('PATCH /users/{userId}', () => {
  let subject: TestApp;
  let owner: TestAccount;
  let other: TestAccount;
  let admin: TestAccount;

  const patch = (
    userId: string,
    body: unknown,
    {
      as = owner,
      accept,
      contentType = MERGE_PATCH,
      ifMatch,
    }: { as?: TestAccount; accept?: string; contentType?: string; ifMatch?: string } = {},
  ) => {
    const headers: Record<string, string> = { authorization: basic(as), 'content-type': contentType };
    if (accept !== undefined) headers.accept = accept;
    if (ifMatch !== undefined) headers['if-match'] = ifMatch;
    return fetch(`${subject.url}/users/${userId}`, {
      method: 'PATCH',
      headers,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  };
  const current = async (account: TestAccount) => {
    const response = await patch(account.userId, {}, { as: account });
    expect(response.status).toBe(200);
    return { body: (await response.json()) as Record<string, unknown>, etag: response.headers.get('etag') };
  };

  beforeAll(async () => {
    subject = await startTestApp();
    [owner, other, admin] = await Promise.all([
      subject.createAccount({ name: 'Owner', age: 30 }),
      subject.createAccount({ name: 'Other', age: 40 }),
      subject.createAccount({ admin: true, name: 'Admin', age: 50 }),
    ]);
  });
  afterAll(() => subject.destroy());

  it('changes the named fields and answers the full user by default', async () => {
    const before = await current(owner);
    const response = await patch(owner.userId, { name: '  Ada  ' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(USER);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual({
      id: owner.userId,
      name: 'Ada',
      age: 30,
      createdon: before.body.createdon,
      modifiedon: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(body.modifiedon).not.toBe(before.body.modifiedon);
    expect(response.headers.get('etag')).not.toBe(before.etag);
  });

  it.each([
    [undefined, USER],
    ['*/*', USER],
    ['application/*', USER],
    ['application/json', USER],
    [USER, USER],
    [FRAGMENT, FRAGMENT],
    [`${USER};q=0.5, ${FRAGMENT}`, FRAGMENT],
    [`${FRAGMENT};q=0, */*`, USER],
    [`text/html, ${FRAGMENT};q=0.1`, FRAGMENT],
  ])('negotiates Accept %p to %s', async (accept, expected) => {
    const response = await patch(owner.userId, { age: 31 }, { accept });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(expected);
  });

  it('answers the fragment with only the patched members and modifiedon', async () => {
    const response = await patch(owner.userId, { age: 44, name: 'Grace' }, { accept: FRAGMENT });
    const body = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['age', 'modifiedon', 'name']);
    expect(body).toMatchObject({ age: 44, name: 'Grace' });
  });

  it('emits nothing for a patch that changes nothing: modifiedon and the ETag stay', async () => {
    const before = await current(owner);
    const response = await patch(owner.userId, { name: before.body.name, age: before.body.age });
    expect(response.status).toBe(200);
    expect(((await response.json()) as Record<string, unknown>).modifiedon).toBe(before.body.modifiedon);
    expect(response.headers.get('etag')).toBe(before.etag);
  });

  it('answers 406 listing the supported types, and changes nothing', async () => {
    const before = await current(owner);
    const response = await patch(owner.userId, { name: 'Never' }, { accept: 'text/html' });
    expect(response.status).toBe(406);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await response.json()) as { supported: string[] };
    expect(problem.supported).toEqual(expect.arrayContaining([USER, FRAGMENT]));
    expect((await current(owner)).body).toEqual(before.body);
  });

  it.each(['application/json', 'text/plain', 'application/x-www-form-urlencoded'])(
    'answers 415 with Accept-Patch for Content-Type %s',
    async (contentType) => {
      const response = await patch(owner.userId, contentType === 'application/json' ? { age: 1 } : 'age=1', {
        contentType,
      });
      expect(response.status).toBe(415);
      expect(response.headers.get('accept-patch')).toBe(MERGE_PATCH);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    },
  );

  it('accepts parameters on the merge-patch media type', async () => {
    const response = await patch(owner.userId, { age: 33 }, { contentType: `${MERGE_PATCH}; charset=utf-8` });
    expect(response.status).toBe(200);
  });

  it.each([
    ['null name', { name: null }, 'name'],
    ['null age', { age: null }, 'age'],
    ['empty name', { name: '   ' }, 'name'],
    ['long name', { name: 'x'.repeat(201) }, 'name'],
    ['name not a string', { name: 42 }, 'name'],
    ['fractional age', { age: 1.5 }, 'age'],
    ['negative age', { age: -1 }, 'age'],
    ['age too high', { age: 151 }, 'age'],
    ['age as string', { age: '30' }, 'age'],
    ['id', { id: 'x' }, 'id'],
    ['createdon', { createdon: '2020-01-01T00:00:00.000Z' }, 'createdon'],
    ['modifiedon', { modifiedon: '2020-01-01T00:00:00.000Z' }, 'modifiedon'],
    ['unknown member', { email: 'a@b.c' }, 'email'],
  ])('answers 422 with field errors for %s, changing nothing', async (_case, body, field) => {
    const before = await current(owner);
    const response = await patch(owner.userId, { ...body });
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { errors: { field: string; message: string }[] };
    expect(problem.errors.map((error) => error.field)).toContain(field);
    expect((await current(owner)).body).toEqual(before.body);
  });

  it('answers 422 for a __proto__ member', async () => {
    const response = await patch(owner.userId, '{"__proto__": {"admin": true}, "age": 20}');
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { errors: { field: string }[] };
    expect(problem.errors.map((error) => error.field)).toContain('__proto__');
  });

  it.each([
    ['an array', '[]'],
    ['a string', '"name"'],
    ['a number', '42'],
    ['null', 'null'],
    ['malformed JSON', '{"name": '],
  ])('answers 400 for a body that is %s', async (_case, body) => {
    const response = await patch(owner.userId, body);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('honours If-Match: the current ETag succeeds, a stale one is 412 and changes nothing', async () => {
    const before = await current(owner);
    const ok = await patch(owner.userId, { age: 60 }, { ifMatch: before.etag! });
    expect(ok.status).toBe(200);
    const stale = await patch(owner.userId, { age: 61 }, { ifMatch: before.etag! });
    expect(stale.status).toBe(412);
    expect((await current(owner)).body.age).toBe(60);
    expect((await patch(owner.userId, { age: 62 }, { ifMatch: '*' })).status).toBe(200);
    expect((await patch(owner.userId, { age: 63 }, { ifMatch: 'W/"1"' })).status).toBe(412);
  });

  it('compares If-Match strongly, character by character: "07" is not "7"', async () => {
    const { etag } = await current(owner);
    const padded = etag!.replace('"', '"0');
    expect((await patch(owner.userId, { age: 64 }, { ifMatch: padded })).status).toBe(412);
    expect((await patch(owner.userId, { age: 64 }, { ifMatch: `"${etag!.slice(1, -1)}.0"` })).status).toBe(
      412,
    );
    expect((await patch(owner.userId, { age: 64 }, { ifMatch: etag! })).status).toBe(200);
  });

  it('answers 403 to a non-admin patching another user, and lets an admin', async () => {
    expect((await patch(other.userId, { age: 41 }, { as: owner })).status).toBe(403);
    const response = await patch(other.userId, { age: 41 }, { as: admin });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { age: number }).age).toBe(41);
  });

  it('answers 404 for an unknown user (to an admin) and 403 to a non-admin', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await patch(unknown, { age: 1 }, { as: admin })).status).toBe(404);
    expect((await patch(unknown, { age: 1 }, { as: owner })).status).toBe(403);
  });

  it('serialises concurrent patches: every one applies, none is lost', async () => {
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => patch(owner.userId, { age: 100 + i }, { accept: FRAGMENT })),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(10).fill(200));
    const etags = new Set(responses.map((response) => response.headers.get('etag')));
    expect(etags.size).toBe(10);
  });

  it('answers 401 without credentials', async () => {
    const response = await fetch(`${subject.url}/users/${owner.userId}`, {
      method: 'PATCH',
      headers: { 'content-type': MERGE_PATCH },
      body: '{}',
    });
    expect(response.status).toBe(401);
  });
});
