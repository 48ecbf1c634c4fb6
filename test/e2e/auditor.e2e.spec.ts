import { SecurityEvents } from '@chronicle/application';
import { basic, issueToken, startTestApp, TestAccount, TestApp } from './support/test-app';

/** The read-only auditor role, and users as they were (issue 22). */
describe('auditor role and as-of reads', () => {
  let subject: TestApp;
  let admin: TestAccount;
  let auditor: TestAccount;
  let member: TestAccount;
  /** The member's user stream as the audit shows it: registered, then two patches. */
  let history: Array<Record<string, any>>;

  const get = (path: string, account: TestAccount, init: RequestInit = {}) =>
    fetch(`${subject.url}${path}`, { ...init, headers: { authorization: basic(account), ...init.headers } });
  const patch = (account: TestAccount, body: object) =>
    get(`/users/${member.userId}`, account, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    subject = await startTestApp();
    admin = await subject.createAccount({ admin: true });
    auditor = await subject.createAccount({ auditor: true, name: 'Auditor' });
    member = await subject.createAccount({ name: 'Grace', age: 20 });
    expect((await patch(member, { age: 21 })).status).toBe(200);
    // A visible gap in time between the two changes, for the time-based reads.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await patch(admin, { name: 'Grace H.', age: 22 })).status).toBe(200);
    const response = await get(`/api/v1/audit/events?stream=user-${member.userId}`, auditor);
    expect(response.status).toBe(200);
    history = (await response.json()) as Array<Record<string, any>>;
    expect(history.map((record) => record.type)).toEqual([
      'UserRegistered.v2',
      'UserPatched.v1',
      'UserPatched.v1',
    ]);
  });
  afterAll(() => subject.destroy());

  it('lets an auditor read the audit, and manage its own token, and nothing else', async () => {
    expect((await get('/api/v1/audit/events?limit=5', auditor)).status).toBe(200);
    expect(await issueToken(subject.url, auditor)).toEqual(expect.any(String));
    const refused = [
      ['GET', '/customers'],
      ['GET', '/users'],
      ['GET', `/users/${auditor.userId}`],
      ['GET', `/users/${member.userId}`],
      ['GET', '/api/v1/admin/projections'],
    ];
    for (const [method, path] of refused) {
      const response = await get(path, auditor, { method });
      expect([method, path, response.status]).toEqual([method, path, 403]);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect((await patch(auditor, { age: 50 })).status).toBe(403);
    // Authorization before validation: an auditor learns nothing from a 400 either.
    expect((await get('/customers?page=zero', auditor)).status).toBe(403);
  });

  it('shows a user as it was at a position, to admins and auditors', async () => {
    for (const reader of [auditor, admin]) {
      const [registered, first, second] = await Promise.all(
        history.map(async (record) => {
          const response = await get(`/users/${member.userId}?asOf=${record.position}`, reader);
          expect(response.status).toBe(200);
          return (await response.json()) as Record<string, any>;
        }),
      );
      expect(registered).toMatchObject({ id: member.userId, name: 'Grace', age: 20 });
      expect(first).toMatchObject({ name: 'Grace', age: 21, modifiedon: history[1].data.modifiedon });
      expect(second).toMatchObject({ name: 'Grace H.', age: 22 });
      expect(registered.createdon).toBe(second.createdon);
    }
    // Past states are read from the history: counted with the audit's reads.
    await subject.app.get(SecurityEvents).flush();
    const reads = await get(`/api/v1/audit/events?type=AuditRead.v1&limit=1000`, admin);
    const routes = ((await reads.json()) as Array<Record<string, any>>)
      .filter((record) => record.data.accountId === auditor.accountId)
      .map((record) => record.data.route);
    expect(routes).toContain('GET /users/:userId');
  });

  it('shows a user as it was at a time, and 404 before it existed', async () => {
    const at = (time: string) => get(`/users/${member.userId}?asOf=${encodeURIComponent(time)}`, auditor);
    const between = await at(history[1].recordedAt);
    expect(between.status).toBe(200);
    expect(await between.json()).toMatchObject({ name: 'Grace', age: 21 });
    // Before its createdon (the writer's clock, as modifiedon; recordedAt is the store's, a little later).
    const before = new Date(Date.parse(history[0].occurredAt) - 1).toISOString();
    const missing = await at(before);
    expect(missing.status).toBe(404);
    // The same moment with an offset is the same moment.
    const offset = history[2].recordedAt.replace('Z', '+00:00');
    expect(await (await at(offset)).json()).toMatchObject({ name: 'Grace H.', age: 22 });
  });

  it("answers asOf=<the modifiedon a PATCH gave> with that PATCH's version, for every PATCH (issue 37)", async () => {
    const token = await issueToken(subject.url, member);
    const answers: Array<Record<string, any>> = [];
    for (let i = 0; i < 45; i++) {
      const response = await fetch(`${subject.url}/users/${member.userId}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ age: 30 + (i % 2), name: `Grace ${i}` }),
      });
      expect(response.status).toBe(200);
      answers.push((await response.json()) as Record<string, any>);
    }

    const seen = await Promise.all(
      answers.map(async (answer) => {
        const response = await get(
          `/users/${member.userId}?asOf=${encodeURIComponent(answer.modifiedon)}`,
          auditor,
        );
        return { status: response.status, user: (await response.json()) as Record<string, any> };
      }),
    );

    expect(seen).toEqual(answers.map((user) => ({ status: 200, user })));
    expect(new Set(answers.map((answer) => answer.modifiedon)).size).toBe(45);
  });

  it('answers a bad asOf with a 400 naming it, and keeps past states from members', async () => {
    for (const bad of ['yesterday', '2026-02-30T00:00:00Z', '2026-11-24T03:00:00', '9223372036854775808']) {
      const response = await get(`/users/${member.userId}?asOf=${encodeURIComponent(bad)}`, admin);
      expect([bad, response.status]).toEqual([bad, 400]);
      expect(await response.json()).toMatchObject({
        type: 'invalid-parameters',
        errors: [{ field: 'asOf' }],
      });
    }
    // Of the shape, but no position of any log: a refusal the document declares, not a pattern's.
    const inverted = await get(`/users/${member.userId}?asOf=42:43`, admin);
    expect(inverted.status).toBe(400);
    expect(await inverted.json()).toMatchObject({ type: 'invalid-position', errors: [{ field: 'asOf' }] });
    const own = await get(`/users/${member.userId}?asOf=${history[0].position}`, member);
    expect(own.status).toBe(403);
    expect((await get(`/users/${member.userId}`, member)).status).toBe(200);
  });
});
