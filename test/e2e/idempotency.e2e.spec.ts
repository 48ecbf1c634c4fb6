import { EventStore } from '@chronicle/event-store';
import { basic, sendAs, startTestApp, TestAccount, TestApp } from './support/test-app';

let keys = 0;
const freshKey = () => `key-${++keys}-${Date.now()}`;

describe('Idempotency-Key on POST and PATCH', () => {
  let subject: TestApp;
  let admin: TestAccount;
  let other: TestAccount;

  const send = (
    method: 'POST' | 'PATCH',
    path: string,
    body: unknown,
    { key, as = admin }: { key?: string; as?: TestAccount } = {},
  ) =>
    sendAs(as, `${subject.url}${path}`, method, body, {
      headers: key === undefined ? {} : { 'idempotency-key': key },
    });
  const answer = async (response: Response) => ({
    status: response.status,
    location: response.headers.get('location'),
    etag: response.headers.get('etag'),
    type: response.headers.get('content-type'),
    // The headers every answer carries, a replay too.
    cache: response.headers.get('cache-control'),
    sniff: response.headers.get('x-content-type-options'),
    requestId: response.headers.get('x-request-id') !== null,
    body: await response.text(),
  });
  const eventsOfType = async (type: string) => {
    let count = 0;
    for await (const event of subject.app.get(EventStore).readAll({ eventTypes: [type] })) if (event) count++;
    return count;
  };

  beforeAll(async () => {
    subject = await startTestApp();
    [admin, other] = await Promise.all([
      subject.createAccount({ admin: true }),
      subject.createAccount({ admin: true }),
    ]);
  });
  afterAll(() => subject.destroy());

  it('replays the first answer to the same request under the same key, writing nothing more', async () => {
    const key = freshKey();
    const before = await eventsOfType('CustomerRegistered.v1');
    const first = await answer(
      await send('POST', '/customers', { name: 'Ada', email: 'ada@example.com' }, { key }),
    );
    const again = await answer(
      await send('POST', '/customers', { name: 'Ada', email: 'ada@example.com' }, { key }),
    );
    expect(first.status).toBe(201);
    expect(again).toEqual(first);
    expect(await eventsOfType('CustomerRegistered.v1')).toBe(before + 1);
  });

  it('replays a PATCH as it was answered, even after later changes, and changes nothing', async () => {
    const created = (await (
      await send('POST', '/customers', { name: 'Grace', email: 'g@example.com' })
    ).json()) as {
      id: number;
    };
    const key = freshKey();
    const first = await answer(
      await send('PATCH', `/customers/${created.id}`, { name: 'Grace H.' }, { key }),
    );
    expect(first.status).toBe(200);
    expect((await send('PATCH', `/customers/${created.id}`, { name: 'Grace Hopper' })).status).toBe(200);
    const again = await answer(
      await send('PATCH', `/customers/${created.id}`, { name: 'Grace H.' }, { key }),
    );
    expect(again).toEqual(first);
    const stream = await subject.app.get(EventStore).readStream(`customer-${created.id}`);
    expect(stream.map((event) => event.type)).toEqual([
      'CustomerRegistered.v1',
      'CustomerChanged.v1',
      'CustomerChanged.v1',
    ]);
    const now = (await (
      await fetch(`${subject.url}/customers/${created.id}`, { headers: { authorization: basic(admin) } })
    ).json()) as {
      name: string;
    };
    expect(now.name).toBe('Grace Hopper');
  });

  it('gives a retried token request the same token, not a second one', async () => {
    const key = freshKey();
    const before = await eventsOfType('SessionStarted.v1');
    const first = await answer(await send('POST', '/api/v1/account/tokens', undefined, { key }));
    const again = await answer(await send('POST', '/api/v1/account/tokens', undefined, { key }));
    expect(first.status).toBe(201);
    expect(again).toEqual(first);
    expect(await eventsOfType('SessionStarted.v1')).toBe(before + 1);
  });

  it('refuses the key for another body, method or path with 422, and writes nothing', async () => {
    const key = freshKey();
    expect(
      (await send('POST', '/customers', { name: 'Alan', email: 'alan@example.com' }, { key })).status,
    ).toBe(201);
    const before = await eventsOfType('CustomerRegistered.v1');
    for (const response of [
      await send('POST', '/customers', { name: 'Alan T.', email: 'alan@example.com' }, { key }),
      await send('PATCH', '/customers/1', { name: 'Alan' }, { key }),
      await send('POST', '/api/v1/account/tokens', undefined, { key }),
    ]) {
      expect(response.status).toBe(422);
      expect(((await response.json()) as { type: string }).type).toBe('idempotency-key-reused');
    }
    expect(await eventsOfType('CustomerRegistered.v1')).toBe(before);
  });

  it('keeps keys per account: the same key from another account is its own', async () => {
    const key = freshKey();
    const mine = await answer(
      await send('POST', '/customers', { name: 'Mine', email: 'm@example.com' }, { key }),
    );
    const theirs = await answer(
      await send('POST', '/customers', { name: 'Mine', email: 'm@example.com' }, { key, as: other }),
    );
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.location).not.toBe(mine.location);
  });

  it('answers 409 to a repeat while the first request still runs, and the first answer afterwards', async () => {
    const key = freshKey();
    const body = { email: `inflight-${Date.now()}@example.com`, name: 'In Flight', age: 30 };
    // Opening an account hashes a password (Argon2id): the repeat arrives while the first runs.
    const [first, repeat] = await Promise.all([
      send('POST', '/api/v1/accounts', body, { key }).then(answer),
      new Promise((resolve) => setTimeout(resolve, 5)).then(() =>
        send('POST', '/api/v1/accounts', body, { key }),
      ),
    ]);
    expect(first.status).toBe(201);
    expect(repeat.status).toBe(409);
    expect(((await repeat.json()) as { type: string }).type).toBe('idempotency-key-in-flight');
    expect(await answer(await send('POST', '/api/v1/accounts', body, { key }))).toEqual(first);
  });

  it('keeps no refusal: a key whose request failed runs again', async () => {
    const key = freshKey();
    expect((await send('POST', '/customers', { name: '', email: 'x@example.com' }, { key })).status).toBe(
      422,
    );
    expect(
      (await send('POST', '/customers', { name: 'Valid', email: 'x@example.com' }, { key })).status,
    ).toBe(201);
  });

  it('takes keys of 1 to 255 visible characters, as a token or a structured-field string', async () => {
    expect(
      (await send('POST', '/customers', { name: 'K', email: 'k@example.com' }, { key: 'k'.repeat(255) }))
        .status,
    ).toBe(201);
    expect(
      (await send('POST', '/customers', { name: 'Q', email: 'q@example.com' }, { key: `"${freshKey()}"` }))
        .status,
    ).toBe(201);
    for (const key of ['k'.repeat(256), '""']) {
      const response = await send('POST', '/customers', { name: 'K', email: 'k@example.com' }, { key });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { type: string }).type).toBe('invalid-idempotency-key');
    }
  });
});
