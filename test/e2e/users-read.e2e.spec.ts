import { ReadStore } from '@chronicle/read-models';
import { basic, startTestApp, TestAccount, TestApp } from './support/test-app';

const MERGE_PATCH = 'application/merge-patch+json';
const USER = 'application/vnd.chronicle.user+json';
const FRAGMENT = 'application/vnd.chronicle.fragment+json';
const RFC3339_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * Holds the read models back until the returned function is called: on the embedded default every
 * batch waits at the read store; on the production shape the projector process is stopped
 * (SIGSTOP). Either way, nothing written meanwhile reaches the users read model.
 */
function holdProjections(subject: TestApp): () => Promise<void> {
  if (subject.projector) {
    const pid = subject.projector.pid;
    process.kill(pid, 'SIGSTOP');
    return async () => {
      process.kill(pid, 'SIGCONT');
      await subject.settle();
    };
  }
  const store = subject.app.get(ReadStore);
  const applyBatch = store.applyBatch.bind(store);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  store.applyBatch = async (...args) => {
    await released;
    return applyBatch(...args);
  };
  return async () => {
    release();
    store.applyBatch = applyBatch;
    await subject.settle();
  };
}

describe('GET /users/{userId} and GET /users', () => {
  let subject: TestApp;
  let owner: TestAccount;
  let other: TestAccount;
  let admin: TestAccount;

  const get = (
    path: string,
    { as = owner, headers = {} }: { as?: TestAccount; headers?: Record<string, string> } = {},
  ) => fetch(`${subject.url}${path}`, { headers: { authorization: basic(as), ...headers } });
  const patch = (userId: string, body: unknown, as = owner) =>
    fetch(`${subject.url}/users/${userId}`, {
      method: 'PATCH',
      headers: { authorization: basic(as), 'content-type': MERGE_PATCH },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    subject = await startTestApp();
    [owner, other, admin] = await Promise.all([
      subject.createAccount({ name: 'Owner', age: 30 }),
      subject.createAccount({ name: 'Other', age: 40 }),
      subject.createAccount({ admin: true, name: 'Admin', age: 50 }),
    ]);
    await subject.settle();
  });
  afterAll(() => subject.destroy());

  describe('GET /users/{userId}', () => {
    it("answers the owner's full user with its ETag, as PATCH answers it", async () => {
      const patched = await patch(owner.userId, { age: 31 });
      expect(patched.status).toBe(200);

      const response = await get(`/users/${owner.userId}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(USER);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('vary')).toBe('Accept');
      expect(response.headers.get('etag')).toBe(patched.headers.get('etag'));
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toEqual(await patched.json());
      expect(Object.keys(body)).toEqual(['id', 'name', 'age', 'createdon', 'modifiedon']);
      expect(body).toMatchObject({
        id: owner.userId,
        name: 'Owner',
        age: 31,
        createdon: expect.stringMatching(RFC3339_MS),
      });
    });

    it.each([undefined, '*/*', 'application/*', 'application/json', USER, `text/html;q=0.5, ${USER}`])(
      'answers the full user for Accept %p',
      async (accept) => {
        const response = await get(`/users/${owner.userId}`, { headers: accept ? { accept } : {} });
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe(USER);
      },
    );

    it.each([FRAGMENT, 'text/html', `${USER};q=0, ${FRAGMENT}`])(
      'answers 406 for Accept %p, listing the full user types only',
      async (accept) => {
        const response = await get(`/users/${owner.userId}`, { headers: { accept } });
        expect(response.status).toBe(406);
        expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(((await response.json()) as { supported: string[] }).supported).toEqual([
          USER,
          'application/json',
        ]);
      },
    );

    it('answers 304 without a body while If-None-Match names the current version', async () => {
      const first = await get(`/users/${owner.userId}`);
      const etag = first.headers.get('etag')!;
      for (const held of [etag, `W/${etag}`, `"999999", ${etag}`, '*']) {
        const response = await get(`/users/${owner.userId}`, { headers: { 'if-none-match': held } });
        expect(response.status).toBe(304);
        expect(response.headers.get('etag')).toBe(etag);
        expect(await response.text()).toBe('');
      }

      expect((await patch(owner.userId, { name: 'Owner Renamed' })).status).toBe(200);
      const changed = await get(`/users/${owner.userId}`, { headers: { 'if-none-match': etag } });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('etag')).not.toBe(etag);
      expect(((await changed.json()) as { name: string }).name).toBe('Owner Renamed');
    });

    it('answers 403 to a non-admin asking for another user, known or not, and 404 to an admin for an unknown one', async () => {
      for (const userId of [other.userId, '00000000-0000-4000-8000-000000000000']) {
        const response = await get(`/users/${userId}`);
        expect(response.status).toBe(403);
        expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      }
      const unknown = await get('/users/00000000-0000-4000-8000-000000000000', { as: admin });
      expect(unknown.status).toBe(404);
      expect(((await unknown.json()) as { type: string }).type).toBe('not-found');
      const known = await get(`/users/${other.userId}`, { as: admin });
      expect(known.status).toBe(200);
      expect(((await known.json()) as { name: string }).name).toBe('Other');
    });

    it('answers 401 without credentials', async () => {
      const response = await fetch(`${subject.url}/users/${owner.userId}`);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toContain('Bearer realm="api"');
    });

    it('reads every PATCH answered before it, while the read models are held back', async () => {
      const resume = holdProjections(subject);
      let lastEtag = '';
      try {
        for (let round = 0; round < 25; round++) {
          const name = `Owner round ${round}`;
          const patched = await patch(owner.userId, { name, age: round % 2 ? 20 + round : 100 - round });
          expect(patched.status).toBe(200);
          const read = await get(`/users/${owner.userId}`);
          expect(read.status).toBe(200);
          expect(read.headers.get('etag')).toBe(patched.headers.get('etag'));
          expect(await read.json()).toEqual(await patched.json());
          lastEtag = patched.headers.get('etag')!;
        }
        // The read model itself was behind all along: the GETs caught up from the stream.
        const stored = await subject.app.get(ReadStore).getUser(owner.userId);
        expect(`"${stored!.revision}"`).not.toBe(lastEtag);
      } finally {
        await resume();
      }
      const stored = await subject.app.get(ReadStore).getUser(owner.userId);
      expect(`"${stored!.revision}"`).toBe(lastEtag);
      const { revision: _revision, ...representation } = stored!;
      expect(await (await get(`/users/${owner.userId}`)).json()).toEqual(representation);
    });

    it('reads a user registered while the read models are held back', async () => {
      const resume = holdProjections(subject);
      try {
        const fresh = await subject.createAccount({ name: 'Fresh', age: 7 });
        expect(await subject.app.get(ReadStore).getUser(fresh.userId)).toBeNull();
        const response = await get(`/users/${fresh.userId}`, { as: fresh });
        expect(response.status).toBe(200);
        expect(response.headers.get('etag')).toBe('"0"');
        expect(await response.json()).toMatchObject({ id: fresh.userId, name: 'Fresh', age: 7 });
      } finally {
        await resume();
      }
    });
  });

  describe('GET /users', () => {
    const list = (query = '', as = admin) => get(`/users${query}`, { as });
    const ids = async (response: Response) =>
      ((await response.json()) as { id: string }[]).map((user) => user.id);

    it('lists every user by createdon, then id, with the total', async () => {
      await subject.settle();
      const response = await list('?maxpagesize=1000');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-store');
      const users = (await response.json()) as { id: string; createdon: string }[];
      expect(response.headers.get('x-total-count')).toBe(String(users.length));
      expect(users.length).toBeGreaterThanOrEqual(3);
      const sorted = [...users].sort((a, b) =>
        a.createdon === b.createdon ? (a.id < b.id ? -1 : 1) : a.createdon < b.createdon ? -1 : 1,
      );
      expect(users).toEqual(sorted);
      expect(users.map((user) => user.id)).toEqual(
        expect.arrayContaining([owner.userId, other.userId, admin.userId]),
      );
      for (const user of users)
        expect(Object.keys(user)).toEqual(['id', 'name', 'age', 'createdon', 'modifiedon']);
    });

    it('pages exactly like /customers: Link next and prev keeping maxpagesize, X-Total-Count', async () => {
      await Promise.all(Array.from({ length: 4 }, (_, i) => subject.createAccount({ name: `Listed ${i}` })));
      await subject.settle();
      const all = await ids(await list('?maxpagesize=1000'));
      const total = all.length;

      const first = await list('?maxpagesize=2');
      expect(await ids(first)).toEqual(all.slice(0, 2));
      expect(first.headers.get('x-total-count')).toBe(String(total));
      expect(first.headers.get('link')).toBe('</users?maxpagesize=2&page=2>; rel="next"');

      const second = await list('?maxpagesize=2&page=2');
      expect(await ids(second)).toEqual(all.slice(2, 4));
      expect(second.headers.get('link')).toBe(
        '</users?maxpagesize=2&page=3>; rel="next", </users?maxpagesize=2&page=1>; rel="prev"',
      );

      const last = Math.ceil(total / 2);
      const end = await list(`?maxpagesize=2&page=${last}`);
      expect(await ids(end)).toEqual(all.slice((last - 1) * 2));
      expect(end.headers.get('link')).toBe(`</users?maxpagesize=2&page=${last - 1}>; rel="prev"`);

      const past = await list('?page=99999999999999999999');
      expect(past.status).toBe(200);
      expect(await past.json()).toEqual([]);
      expect(past.headers.get('x-total-count')).toBe(String(total));
    });

    it('lowers maxpagesize above 1000 to 1000', async () => {
      const response = await list('?maxpagesize=5000');
      expect(response.status).toBe(200);
      expect((await ids(response)).length).toBe(Number(response.headers.get('x-total-count')));
    });

    it.each([
      ['?page=0', 'page'],
      ['?page=x', 'page'],
      ['?maxpagesize=0', 'maxpagesize'],
      ['?maxpagesize=1e3', 'maxpagesize'],
      ['?gt=1', 'gt'],
    ])('answers 400 for %s naming %s', async (query, field) => {
      const response = await list(query);
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(JSON.stringify(await response.json())).toContain(field);
    });

    it('answers 403 to a non-admin, whatever the query', async () => {
      for (const query of ['', '?page=0']) {
        const response = await list(query, owner);
        expect(response.status).toBe(403);
      }
    });
  });

  it('shows a PATCH in the list once the read model has it, and the list never holds the revision', async () => {
    expect((await patch(other.userId, { age: 41 }, other)).status).toBe(200);
    await subject.settle();
    const users = (await (await get('/users?maxpagesize=1000', { as: admin })).json()) as Record<
      string,
      unknown
    >[];
    expect(users.find((user) => user.id === other.userId)).toMatchObject({ age: 41 });
    expect(users.every((user) => !('revision' in user))).toBe(true);
  });
});
