import { SecurityEvents } from '@chronicle/application';
import { jsonLines, runCliProcess as cli } from './support/cli-process';
import { eventually } from './support/eventually';
import { basic, startTestApp, TestAccount, TestApp } from './support/test-app';

const MERGE_PATCH = 'application/merge-patch+json';
const RFC3339_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

type Document = Record<string, any>;

describe('GET /users/{userId}/export, GET /customers/{id}/export and the CLI export', () => {
  let subject: TestApp;
  let owner: TestAccount;
  let other: TestAccount;
  let admin: TestAccount;

  const get = (path: string, as: TestAccount, headers: Record<string, string> = {}) =>
    fetch(`${subject.url}${path}`, { headers: { authorization: basic(as), ...headers } });
  const send = (method: string, path: string, as: TestAccount, body: unknown, contentType = MERGE_PATCH) =>
    fetch(`${subject.url}${path}`, {
      method,
      headers: { authorization: basic(as), 'content-type': contentType },
      body: JSON.stringify(body),
    });
  const exportOf = async (path: string, as: TestAccount): Promise<Document> => {
    const response = await get(path, as);
    expect(response.status).toBe(200);
    return (await response.json()) as Document;
  };
  /** The document without the moment it was read: what two exports of the same history share. */
  const timeless = ({ exportedAt, ...rest }: Document): Document => {
    expect(exportedAt).toMatch(RFC3339_MS);
    return rest;
  };

  beforeAll(async () => {
    subject = await startTestApp();
    [owner, other, admin] = await Promise.all([
      subject.createAccount({ name: 'Ada', age: 36 }),
      subject.createAccount({ name: 'Other', age: 40 }),
      subject.createAccount({ admin: true, name: 'Admin', age: 50 }),
    ]);
    // A history: the person renames herself, an admin changes her age, she logs in, and asks for a reset.
    expect((await send('PATCH', `/users/${owner.userId}`, owner, { name: 'Ada L.' })).status).toBe(200);
    expect((await send('PATCH', `/users/${owner.userId}`, admin, { age: 37 })).status).toBe(200);
    const token = await fetch(`${subject.url}/api/v1/account/tokens`, {
      method: 'POST',
      headers: { authorization: basic(owner) },
    });
    expect(token.status).toBe(201);
    const reset = await fetch(`${subject.url}/api/v1/account/password`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: owner.email }),
    });
    expect(reset.status).toBe(202);
    // The e-mail is sent after the answer, by the password saga.
    await eventually('the reset e-mail', async () => {
      const document = await exportOf(`/users/${owner.userId}/export`, admin);
      return document.emails.some((email: Document) => email.kind === 'password-reset');
    });
  });
  afterAll(() => subject.destroy());

  it("gives an admin the person's values with their history, sessions, e-mails and audit, as a download", async () => {
    const response = await get(`/users/${owner.userId}/export`, admin);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="chronicle-user-${owner.userId}-export.json"`,
    );
    expect(response.headers.get('cache-control')).toBe('no-store');
    const text = await response.text();
    const document = JSON.parse(text) as Document;
    expect(document).toMatchObject({
      subject: { kind: 'user', id: owner.userId },
      exportedAt: expect.stringMatching(RFC3339_MS),
      accountId: owner.accountId,
      personalData: {
        name: [
          { value: 'Ada', actor: 'system' },
          { value: 'Ada L.', actor: owner.accountId },
        ],
        age: [
          { value: 36, actor: 'system' },
          { value: 37, actor: admin.accountId },
        ],
        email: [{ value: owner.email, actor: 'system' }],
      },
      sessions: [
        {
          id: expect.any(String),
          method: 'basic',
          startedAt: expect.stringMatching(RFC3339_MS),
          expiresAt: expect.stringMatching(RFC3339_MS),
          endedAt: null,
          tokens: 1,
        },
      ],
      emails: [{ kind: 'password-reset', to: owner.email, sentAt: expect.stringMatching(RFC3339_MS) }],
      omitted: { sessions: 0 },
    });
    for (const change of [...document.personalData.name, ...document.personalData.age]) {
      expect(change).toEqual({
        value: change.value,
        occurredAt: expect.stringMatching(RFC3339_MS),
        recordedAt: expect.stringMatching(RFC3339_MS),
        actor: change.actor,
        position: expect.stringMatching(/^\d+(:\d+)?$/),
      });
    }
    const streams = new Set(document.audit.map((record: Document) => record.stream));
    // Sorted: account-, passwordreset-, session-, user-.
    expect([...streams].sort()).toEqual([
      `account-${owner.accountId}`,
      expect.stringMatching(/^passwordreset-/),
      `session-${document.sessions[0].id}`,
      `user-${owner.userId}`,
    ]);
    // Nothing of anyone else's, and no password hash.
    expect(text).not.toContain(other.userId);
    expect(text).not.toContain('$argon2');
  });

  it("shows the audit records of the person's streams exactly as the audit does", async () => {
    const document = await exportOf(`/users/${owner.userId}/export`, admin);
    for (const stream of [`user-${owner.userId}`, `account-${owner.accountId}`]) {
      const audit = await get(`/api/v1/audit/events?stream=${stream}`, admin);
      expect(audit.status).toBe(200);
      expect(document.audit.filter((record: Document) => record.stream === stream)).toEqual(
        await audit.json(),
      );
    }
  });

  it('gives a person the export of their own user', async () => {
    const own = await exportOf(`/users/${owner.userId}/export`, owner);
    const byAdmin = await exportOf(`/users/${owner.userId}/export`, admin);
    expect(timeless(own)).toEqual(timeless(byAdmin));
  });

  it('refuses another user to a non-admin, known or not, as GET /users/{id} does', async () => {
    for (const userId of [owner.userId, 'no-such-user']) {
      const [exported, read] = await Promise.all([
        get(`/users/${userId}/export`, other),
        get(`/users/${userId}`, other),
      ]);
      expect(exported.status).toBe(403);
      expect(read.status).toBe(403);
      expect(exported.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await exported.json()).toEqual(await read.json());
    }
  });

  it('answers 404 for a user no one has', async () => {
    const response = await get('/users/no-such-user/export', admin);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toEqual(await (await get('/users/no-such-user', admin)).json());
  });

  it('answers 406 for an Accept it cannot serve, before reading anything', async () => {
    const response = await get(`/users/${owner.userId}/export`, admin, { accept: 'text/csv' });
    expect(response.status).toBe(406);
    expect(((await response.json()) as { supported: string[] }).supported).toEqual(['application/json']);
    const customer = await get('/customers/1/export', admin, { accept: 'text/html' });
    expect(customer.status).toBe(406);
  });

  it('records each export as a read of the history, by whom and of which route', async () => {
    await exportOf(`/users/${owner.userId}/export`, owner);
    await subject.app.get(SecurityEvents).flush();
    const reads = await get('/api/v1/audit/events?type=AuditRead.v1&limit=1000', admin);
    const records = (await reads.json()) as Document[];
    expect(records.map((record) => record.data)).toContainEqual(
      expect.objectContaining({ accountId: owner.accountId, route: 'GET /users/:userId/export' }),
    );
  });

  it("exports a customer's name and address with their history, to an admin only", async () => {
    const created = await send(
      'POST',
      '/customers',
      admin,
      { name: 'Acme', email: 'acme@example.com' },
      'application/json',
    );
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const changed = await send('PATCH', `/customers/${id}`, admin, { email: 'sales@acme.example' });
    expect(changed.status).toBe(200);

    const response = await get(`/customers/${id}/export`, admin);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="chronicle-customer-${id}-export.json"`,
    );
    const document = (await response.json()) as Document;
    expect(document).toEqual({
      subject: { kind: 'customer', id },
      exportedAt: expect.stringMatching(RFC3339_MS),
      personalData: {
        name: [expect.objectContaining({ value: 'Acme', actor: admin.accountId })],
        email: [
          expect.objectContaining({ value: 'acme@example.com', actor: admin.accountId }),
          expect.objectContaining({ value: 'sales@acme.example', actor: admin.accountId }),
        ],
      },
      audit: await (await get(`/api/v1/audit/events?stream=customer-${id}`, admin)).json(),
    });

    expect((await get(`/customers/${id}/export`, owner)).status).toBe(403);
    expect((await get('/customers/999999/export', admin)).status).toBe(404);
    expect((await get('/customers/not-a-number/export', admin)).status).toBe(404);
  });

  it('prints from the CLI the same document the route answers', async () => {
    const customer = await send(
      'POST',
      '/customers',
      admin,
      { name: 'Babbage', email: 'charles@example.com' },
      'application/json',
    );
    const { id } = (await customer.json()) as { id: number };
    const user = await exportOf(`/users/${owner.userId}/export`, admin);
    const customerDocument = await exportOf(`/customers/${id}/export`, admin);
    await subject.stop();

    const printed = await cli(subject.dataDir, 'export', '--user', owner.userId);
    expect(printed.code).toBe(0);
    const lines = jsonLines(printed.stdout);
    expect(lines).toHaveLength(1);
    expect(timeless(lines[0])).toEqual(timeless(user));

    const printedCustomer = await cli(subject.dataDir, 'export', '--customer', String(id));
    expect(printedCustomer.code).toBe(0);
    expect(timeless(jsonLines(printedCustomer.stdout)[0])).toEqual(timeless(customerDocument));

    // Each run is recorded as a read of the history, as the API's exports are.
    const reads = await cli(subject.dataDir, 'audit', '--type', 'AuditRead.v1');
    expect(jsonLines(reads.stdout).filter((line) => line.data?.route === 'CLI export')).toHaveLength(2);

    const unknown = await cli(subject.dataDir, 'export', '--user', 'no-such-user');
    expect(unknown.code).toBe(1);
    expect(jsonLines(unknown.stderr)).toEqual([{ error: 'not-found', message: 'User not found' }]);
    const neither = await cli(subject.dataDir, 'export');
    expect(neither.code).toBe(2);
    expect(jsonLines(neither.stderr)).toEqual([
      { error: 'usage', message: 'give --user ID or --customer ID' },
    ]);
  });
});
