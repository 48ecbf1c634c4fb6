import { randomUUID } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { AccessTokenCodec, SecurityEvents } from '@chronicle/application';
import { runCliProcess } from './support/cli-process';
import { clearOfLimitWindowEnd } from './support/limit-window';
import { basic, issueToken, startTestApp, TestAccount, TestApp } from './support/test-app';

/** Failures and audit reads leave a trace in the history, coalesced (issue 22). */
describe('security events', () => {
  let subject: TestApp;
  let admin: TestAccount;
  let auditor: TestAccount;
  let member: TestAccount;
  const USER_AGENT = 'security-e2e/1.0';

  const send = (path: string, init: RequestInit = {}) =>
    fetch(`${subject.url}${path}`, { ...init, headers: { 'user-agent': USER_AGENT, ...init.headers } });
  const put = (body: object, authorization?: string) =>
    send('/api/v1/account/password', {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(body),
    });
  /** The security events written so far (after a flush), as the auditor sees them. */
  const recorded = async (type: string): Promise<Array<Record<string, any>>> => {
    await subject.app.get(SecurityEvents).flush();
    const response = await fetch(`${subject.url}/api/v1/audit/events?type=${type}&limit=1000`, {
      headers: { authorization: basic(auditor) },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Array<Record<string, any>>;
  };

  beforeAll(async () => {
    subject = await startTestApp({ env: { RESET_REQUESTS_PER_EMAIL: '2' } });
    admin = await subject.createAccount({ admin: true });
    auditor = await subject.createAccount({ auditor: true });
    member = await subject.createAccount({ name: 'Member' });
  });
  afterAll(() => subject.destroy());

  it('records failed logins as one event per key and minute, with a count and no address', async () => {
    const wrong = basic({ email: member.email, password: 'not the password' });
    for (let i = 0; i < 3; i++) {
      expect((await send('/customers', { headers: { authorization: wrong } })).status).toBe(401);
    }
    const events = await recorded('LoginFailed.v1');
    // One event, or two if a minute ended between the requests.
    expect(events.length).toBeLessThanOrEqual(2);
    expect(events.reduce((sum, event) => sum + event.data.count, 0)).toBe(3);
    const event = events.at(-1)!;
    for (const { data } of events) expect(data.firstAt.slice(0, 16)).toBe(data.lastAt.slice(0, 16));
    expect(event.stream).toMatch(/^security-\d{4}-\d\d-\d\d$/);
    expect(event.data).toEqual({
      emailHash: subject.app.get(SecurityEvents).emailHashOf(member.email),
      accountId: null,
      client: '127.0.0.1',
      userAgent: USER_AGENT,
      route: 'GET /customers',
      count: expect.any(Number),
      firstAt: expect.any(String),
      lastAt: expect.any(String),
      overflow: false,
    });
    expect(JSON.stringify(event)).not.toContain(member.email);
  });

  it('records a wrong old password, an invalid reset token, a 403 on an admin route and 429s', async () => {
    await clearOfLimitWindowEnd();
    expect(
      (await put({ old: 'wrong old password', new: 'a new long passphrase' }, basic(member))).status,
    ).toBe(400);
    expect((await put({ token: 'no-such-token', new: 'a new long passphrase' })).status).toBe(400);
    expect((await send('/users', { headers: { authorization: basic(member) } })).status).toBe(403);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await put({ email: 'flooded@example.com' })).status);
    expect(statuses).toEqual([202, 202, 429, 429]);

    const [oldPassword] = await recorded('OldPasswordRejected.v1');
    expect(oldPassword.data).toMatchObject({
      accountId: member.accountId,
      route: 'PUT /api/v1/account/password',
      count: 1,
    });
    const [resetToken] = await recorded('ResetTokenRejected.v1');
    expect(resetToken.data).toMatchObject({
      emailHash: null,
      accountId: null,
      userAgent: USER_AGENT,
      count: 1,
    });
    const [forbidden] = await recorded('AccessForbidden.v1');
    expect(forbidden.data).toMatchObject({ accountId: member.accountId, route: 'GET /users', count: 1 });
    const limited = await recorded('RateLimited.v1');
    expect(limited.reduce((sum, event) => sum + event.data.count, 0)).toBe(2);
    // Counted per client: a limited client's 429s name no address.
    expect(limited[0].data).toMatchObject({ emailHash: null, route: 'PUT /api/v1/account/password' });
  });

  it('records rejected bearer tokens, coalesced, with the token id only of a well-signed one, never the token', async () => {
    const holder = await subject.createAccount({ name: 'Holder' });
    const revoked = await issueToken(subject.url, holder);
    const changed = await put({ old: holder.password, new: 'another long passphrase' }, basic(holder));
    expect(changed.status).toBe(204);
    const now = Date.now();
    const expired = subject.app.get(AccessTokenCodec).sign({
      accountId: holder.accountId,
      tokenId: randomUUID(),
      sessionId: randomUUID(),
      credentialsVersion: 1,
      issuedAt: now - 120_000,
      expiresAt: now - 60_000,
    });
    const tokenIdOf = (token: string) =>
      (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as string[])[1];
    // The expired token's claims under the revoked one's signature: a forgery.
    const forged = `${expired.split('.').slice(0, 2).join('.')}.${revoked.split('.')[2]}`;
    const bearer = (token: string) => send('/customers', { headers: { authorization: `Bearer ${token}` } });

    expect((await bearer(revoked)).status).toBe(401);
    expect((await bearer(expired)).status).toBe(401);
    expect((await bearer(forged)).status).toBe(401);
    // A flood of malformed tokens, in parallel: one event with a count.
    const flood = await Promise.all(
      Array.from({ length: 40 }, (_, i) => bearer(`garbage-${i}-${randomUUID()}`).then((r) => r.status)),
    );
    expect(new Set(flood)).toEqual(new Set([401]));

    const events = await recorded('AccessTokenRejected.v1');
    const byReason = (reason: string) => events.filter((event) => event.data.reason === reason);
    expect(byReason('revoked').map((event) => event.data)).toEqual([
      expect.objectContaining({ tokenId: tokenIdOf(revoked), accountId: null, emailHash: null, count: 1 }),
    ]);
    expect(byReason('expired').map((event) => event.data)).toEqual([
      expect.objectContaining({ tokenId: tokenIdOf(expired), count: 1 }),
    ]);
    const invalid = byReason('invalid');
    // One event (two if a minute ended during the flood) for the forgery and the 40 malformed.
    expect(invalid.length).toBeLessThanOrEqual(2);
    expect(invalid.reduce((sum, event) => sum + event.data.count, 0)).toBe(41);
    for (const event of events) expect(event.stream).toMatch(/^security-\d{4}-\d\d-\d\d$/);
    expect(invalid[0].data).toEqual({
      reason: 'invalid',
      tokenId: null,
      emailHash: null,
      accountId: null,
      client: '127.0.0.1',
      userAgent: USER_AGENT,
      route: 'GET /customers',
      count: expect.any(Number),
      firstAt: expect.any(String),
      lastAt: expect.any(String),
      overflow: false,
    });
    const written = JSON.stringify(events);
    for (const token of [revoked, expired, forged]) {
      for (const part of token.split('.').slice(1)) expect(written).not.toContain(part);
    }
    expect(written).not.toContain('garbage-');
  });

  it('records who read the audit', async () => {
    const reads = await recorded('AuditRead.v1');
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.find((event) => event.data.accountId === auditor.accountId)?.data).toMatchObject({
      emailHash: subject.app.get(SecurityEvents).emailHashOf(auditor.email),
      route: 'GET /api/v1/audit/events',
    });
    // An admin's reads are counted as well.
    expect(
      (
        await fetch(`${subject.url}/api/v1/audit/events?limit=1`, {
          headers: { authorization: basic(admin) },
        })
      ).status,
    ).toBe(200);
    expect((await recorded('AuditRead.v1')).map((event) => event.data.accountId)).toContain(admin.accountId);
  });

  it('records reads of the history by the CLI as its own, like the API records them (issue 37)', async () => {
    const actor = `cli:${userInfo().username}`;
    const cliReads = async () => (await recorded('AuditRead.v1')).filter((event) => event.actor === actor);
    expect(await cliReads()).toEqual([]);

    const exported = await runCliProcess(subject.dataDir, 'audit');
    const verified = await runCliProcess(subject.dataDir, 'audit', 'verify');
    const past = await runCliProcess(subject.dataDir, 'users', 'get', member.userId, '--as-of', '1');

    expect([exported.code, verified.code]).toEqual([0, 0]);
    expect(past.code).not.toBe(0); // Position 1 is before the member existed: read, and refused.
    const reads = await cliReads();
    expect(reads.map((event) => event.data.route).sort()).toEqual([
      'CLI audit',
      'CLI audit verify',
      'CLI users get --as-of',
    ]);
    for (const read of reads) {
      expect(read).toMatchObject({
        actor,
        auth: { method: 'cli', tokenId: null },
        correlationId: expect.stringMatching(/^cli-/),
        data: { accountId: actor, emailHash: null, client: hostname(), userAgent: 'chronicle-cli', count: 1 },
      });
    }
  });
});
