import { request as httpRequest } from 'node:http';
import type { ParsedMail } from 'mailparser';
import { Clock, passwordSaga } from '@chronicle/application';
import { CheckpointStore, comparePositions, EventStore, Position } from '@chronicle/event-store';
import { startSmtpCatcher } from '../support/smtp-catcher';
import { eventually } from './support/eventually';
import { clearOfLimitWindowEnd } from './support/limit-window';
import { basic, issueToken, newDataDir, startTestApp, TestAccount, TestApp } from './support/test-app';

type Catcher = Awaited<ReturnType<typeof startSmtpCatcher>>;

const PUBLIC_BASE_URL = 'https://accounts.example.test';
const tokenIn = (mail: ParsedMail): string => {
  const match = /[?&]token=([A-Za-z0-9_-]+)/.exec(mail.text ?? '');
  if (!match) throw new Error('no token in the e-mail');
  return match[1];
};
const to = (mail: ParsedMail): string =>
  (Array.isArray(mail.to) ? mail.to : [mail.to])
    .flatMap((address) => address?.value ?? [])
    .map((v) => v.address)[0] ?? '';

/** Resolves once the app's password saga has handled every event stored so far that it is fed. */
async function sagaSettled(subject: TestApp): Promise<void> {
  let head: Position | null = null;
  for await (const event of subject.app.get(EventStore).readAll({ eventTypes: passwordSaga.eventTypes })) {
    head = event.position;
  }
  await eventually('the password saga catching up', async () => {
    const checkpoint = await subject.app.get(CheckpointStore).load(passwordSaga.name);
    return head === null || (checkpoint !== null && comparePositions(checkpoint, head) >= 0);
  });
}

function putPassword(url: string, body: unknown, authorization?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization) headers.authorization = authorization;
  return fetch(`${url}/api/v1/account/password`, {
    method: 'PUT',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('PUT /api/v1/account/password', () => {
  let catcher: Catcher;
  let subject: TestApp;

  const resetMail = (account: TestAccount, count = 1) =>
    catcher
      .waitFor(
        () =>
          catcher.messages.filter((m) => to(m) === account.email && /Reset/.test(m.subject ?? '')).length >=
          count,
        15_000,
      )
      .then(
        () =>
          catcher.messages.filter((m) => to(m) === account.email && /Reset/.test(m.subject ?? ''))[count - 1],
      );
  const noticeMail = (account: TestAccount) =>
    catcher.waitFor((m) => to(m) === account.email && /changed/.test(m.subject ?? ''), 15_000);
  const requestReset = async (account: { email: string }) => {
    const response = await putPassword(subject.url, { email: account.email });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
  };
  const customers = (authorization: string) =>
    fetch(`${subject.url}/customers`, { headers: { authorization } }).then((response) => response.status);

  beforeAll(async () => {
    catcher = await startSmtpCatcher();
    subject = await startTestApp({
      env: {
        SMTP_URL: catcher.url,
        PUBLIC_BASE_URL,
        RESET_REQUESTS_PER_EMAIL: '3',
        RESET_REQUESTS_PER_CLIENT: '1000',
      },
    });
  });
  afterAll(async () => {
    await subject.destroy();
    await catcher.stop();
  });

  it('resets the password with the e-mailed link, once', async () => {
    const account = await subject.createAccount();
    // Verified Basic credentials are cached: the reset must drop them.
    expect(await customers(basic(account))).toBe(200);
    await requestReset(account);
    const mail = await resetMail(account);
    expect(mail.text).toContain(`${PUBLIC_BASE_URL}/reset-password?token=`);
    expect(mail.html).toContain(`${PUBLIC_BASE_URL}/reset-password?token=`);
    const token = tokenIn(mail);

    const reset = await putPassword(subject.url, { token, new: 'a brand new passphrase' });
    expect(reset.status).toBe(204);
    expect(await customers(basic(account))).toBe(401);
    expect(await customers(basic({ email: account.email, password: 'a brand new passphrase' }))).toBe(200);

    const again = await putPassword(subject.url, { token, new: 'yet another passphrase' });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ type: 'invalid-reset-token', status: 400 });
    const notice = await noticeMail(account);
    expect(notice.text).not.toMatch(/token=/);
  });

  it('voids an older token once a newer one has been used', async () => {
    const account = await subject.createAccount();
    await requestReset(account);
    const older = tokenIn(await resetMail(account, 1));
    await requestReset(account);
    const newer = tokenIn(await resetMail(account, 2));
    expect(newer).not.toBe(older);
    expect((await putPassword(subject.url, { token: newer, new: 'the newest passphrase' })).status).toBe(204);
    const stale = await putPassword(subject.url, { token: older, new: 'an older passphrase' });
    expect(stale.status).toBe(400);
    expect(await stale.json()).toMatchObject({ type: 'invalid-reset-token' });
  });

  it('revokes access tokens issued before the reset', async () => {
    const account = await subject.createAccount();
    const bearer = `Bearer ${await issueToken(subject.url, account)}`;
    expect(await customers(bearer)).toBe(200);
    await requestReset(account);
    const token = tokenIn(await resetMail(account));
    expect((await putPassword(subject.url, { token, new: 'fresh passphrase here' })).status).toBe(204);
    expect(await customers(bearer)).toBe(401);
    const fresh = await issueToken(subject.url, { ...account, password: 'fresh passphrase here' });
    expect(await customers(`Bearer ${fresh}`)).toBe(200);
  });

  it('answers 202 for an unknown address and sends nothing', async () => {
    const unknown = 'nobody-here@example.com';
    await requestReset({ email: unknown });
    const known = await subject.createAccount();
    await requestReset(known);
    // The saga handles requests in order: once the later one is mailed, the earlier one was handled.
    await resetMail(known);
    // Counted by address: a late notice of an earlier test may land on the shared catcher meanwhile.
    expect(catcher.messages.filter((m) => to(m) === unknown)).toEqual([]);
    expect(catcher.messages.filter((m) => to(m) === known.email)).toHaveLength(1);
  });

  it('answers 422 for a new password that breaks the policy, and keeps the token usable', async () => {
    const account = await subject.createAccount();
    await requestReset(account);
    const token = tokenIn(await resetMail(account));
    for (const [weak, type] of [
      ['short', 'validation-error'],
      ['password123', 'common-password'],
      [account.email, 'password-is-email'],
    ]) {
      const response = await putPassword(subject.url, { token, new: weak });
      expect(response.status).toBe(422);
      expect((await response.json()) as { errors: { field: string }[] }).toMatchObject({
        type,
        errors: [{ field: 'new' }],
      });
    }
    expect((await putPassword(subject.url, { token, new: 'a much better passphrase' })).status).toBe(204);
  });

  it.each([
    ['an empty object', {}],
    ['both forms at once', { email: 'a@example.com', token: 'x' }],
    ['a token without new', { token: 'x' }],
    ['old without new', { old: 'x' }],
    ['an extra member', { email: 'a@example.com', admin: true }],
    ['email of the wrong type', { email: 42 }],
    ['new of the wrong type', { token: 'x', new: 12345678 }],
    ['an array', [{ email: 'a@example.com' }]],
    ['malformed JSON', '{"email": '],
  ])('answers 400 problem details for %s', async (_case, body) => {
    const response = await putPassword(subject.url, body);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it.each([
    ['an e-mail that is no address', { email: 'not-an-address' }],
    ['an e-mail longer than 254 characters', { email: `${'a'.repeat(250)}@example.com` }],
    ['an empty e-mail', { email: '' }],
  ])('answers 422 problem details for %s', async (_case, body) => {
    const response = await putPassword(subject.url, body);
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { status: number; errors: { field: string }[] };
    expect(problem.status).toBe(422);
    expect(new Set(problem.errors.map((error) => error.field))).toEqual(new Set(['email']));
  });

  it.each(['', 'garbage', 'A'.repeat(64), 'x'.repeat(600)])(
    'answers 400 invalid-reset-token for token %p',
    async (token) => {
      const response = await putPassword(subject.url, { token, new: 'a fine passphrase' });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ type: 'invalid-reset-token' });
    },
  );

  describe('the authenticated change', () => {
    it('answers 401 without credentials, or with bad ones', async () => {
      const none = await putPassword(subject.url, { old: 'x', new: 'a new passphrase' });
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toContain('Basic');
      const bad = await putPassword(subject.url, { old: 'x', new: 'a new passphrase' }, 'Bearer not-a-token');
      expect(bad.status).toBe(401);
      expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"');
    });

    it('answers 400 wrong-password for a wrong old password', async () => {
      const account = await subject.createAccount();
      const response = await putPassword(
        subject.url,
        { old: 'not my password', new: 'a new passphrase' },
        basic(account),
      );
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ type: 'wrong-password' });
      // Refused means unchanged: the password still works, the proposed one does not.
      expect(await customers(basic(account))).toBe(200);
      expect(await customers(basic({ ...account, password: 'a new passphrase' }))).toBe(401);
    });

    it('answers 422 for a new password that breaks the policy', async () => {
      const account = await subject.createAccount();
      const response = await putPassword(
        subject.url,
        { old: account.password, new: 'qwerty123' },
        basic(account),
      );
      expect(response.status).toBe(422);
      expect(await customers(basic(account))).toBe(200);
      expect(await customers(basic({ ...account, password: 'qwerty123' }))).toBe(401);
    });

    it('changes the password (Bearer or Basic), revokes older tokens and sends a notice', async () => {
      const account = await subject.createAccount();
      const bearer = `Bearer ${await issueToken(subject.url, account)}`;
      expect(await customers(basic(account))).toBe(200);
      const response = await putPassword(
        subject.url,
        { old: account.password, new: 'changed passphrase ok' },
        bearer,
      );
      expect(response.status).toBe(204);
      expect(await customers(bearer)).toBe(401);
      expect(await customers(basic(account))).toBe(401);
      const changed = { ...account, password: 'changed passphrase ok' };
      expect(await customers(basic(changed))).toBe(200);
      await noticeMail(account);
      const viaQuery = await fetch(
        `${subject.url}/api/v1/account/password?access_token=${await issueToken(subject.url, changed)}`,
        {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ old: changed.password, new: 'third passphrase ok' }),
        },
      );
      expect(viaQuery.status).toBe(204);
    });
  });

  it('rate limits reset requests per address with 429 and Retry-After', async () => {
    await clearOfLimitWindowEnd();
    const email = 'limited@example.com';
    for (let i = 0; i < 3; i++) expect((await putPassword(subject.url, { email })).status).toBe(202);
    const limited = await putPassword(subject.url, { email: ' LIMITED@example.com ' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.json()).toMatchObject({ status: 429, type: 'too-many-requests' });
    expect((await putPassword(subject.url, { email: 'someone-else@example.com' })).status).toBe(202);
  });
});

describe('the per-client limit on reset requests', () => {
  let subject: TestApp;

  /** A reset request from the given loopback address (any 127.x.y.z is this host on Linux). */
  const requestFrom = (localAddress: string, email: string, headers: Record<string, string> = {}) =>
    new Promise<number>((resolve, reject) => {
      const body = JSON.stringify({ email });
      const request = httpRequest(
        `${subject.url}/api/v1/account/password`,
        { method: 'PUT', localAddress, headers: { 'content-type': 'application/json', ...headers } },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        },
      );
      request.on('error', reject);
      request.end(body);
    });

  beforeAll(async () => {
    subject = await startTestApp({
      env: { RESET_REQUESTS_PER_CLIENT: '2', RESET_REQUESTS_PER_EMAIL: '100' },
    });
  });
  afterAll(() => subject.destroy());

  it('answers 429 to a client past RESET_REQUESTS_PER_CLIENT, whatever the address asked for', async () => {
    await clearOfLimitWindowEnd();
    expect(await requestFrom('127.0.0.1', 'first@example.com')).toBe(202);
    expect(await requestFrom('127.0.0.1', 'second@example.com')).toBe(202);
    expect(await requestFrom('127.0.0.1', 'third@example.com')).toBe(429);
    // X-Forwarded-For is not trusted: it cannot buy a client a fresh allowance.
    expect(await requestFrom('127.0.0.1', 'fourth@example.com', { 'x-forwarded-for': '203.0.113.9' })).toBe(
      429,
    );
    expect(await requestFrom('127.0.0.2', 'third@example.com')).toBe(202);
  });
});

describe('password reset across restarts and time', () => {
  it('sends the e-mail exactly once when the process stopped before sending it', async () => {
    const dataDir = newDataDir();
    const dead = await startSmtpCatcher();
    await dead.stop();
    // SMTP unreachable: the request is stored, the saga keeps retrying the send.
    const first = await startTestApp({ dataDir, env: { SMTP_URL: dead.url } });
    const account = await first.createAccount();
    expect((await putPassword(first.url, { email: account.email })).status).toBe(202);
    // The saga has issued the token, so it was at the send when the process stopped.
    await eventually('the reset token', async () => {
      for await (const event of first.app.get(EventStore).readAll({ eventTypes: ['ResetTokenIssued.v1'] })) {
        if ((event.data as { accountId?: string }).accountId === account.accountId) return true;
      }
      return false;
    });
    await first.stop();

    const catcher = await startSmtpCatcher();
    try {
      const second = await startTestApp({ dataDir, env: { SMTP_URL: catcher.url } });
      await catcher.waitFor((m) => to(m) === account.email, 15_000);
      await sagaSettled(second);
      await second.stop();
      // A third start replays everything again: still no second e-mail.
      const third = await startTestApp({ dataDir, env: { SMTP_URL: catcher.url } });
      await sagaSettled(third);
      expect(catcher.messages.filter((m) => to(m) === account.email)).toHaveLength(1);
      const token = tokenIn(catcher.messages.find((m) => to(m) === account.email)!);
      expect((await putPassword(third.url, { token, new: 'after the restart' })).status).toBe(204);
      await third.destroy();
    } finally {
      await catcher.stop();
    }
  });

  it('retries a failing send until it goes through', async () => {
    const catcher = await startSmtpCatcher();
    const subject = await startTestApp({ env: { SMTP_URL: catcher.url } });
    try {
      const account = await subject.createAccount();
      catcher.failNext(2);
      expect((await putPassword(subject.url, { email: account.email })).status).toBe(202);
      const mail = await catcher.waitFor((m) => to(m) === account.email, 15_000);
      expect(tokenIn(mail)).toMatch(/^[A-Za-z0-9_-]{64}$/);
    } finally {
      await subject.destroy();
      await catcher.stop();
    }
  });

  it('refuses an expired token', async () => {
    const catcher = await startSmtpCatcher();
    const subject = await startTestApp({ env: { SMTP_URL: catcher.url } });
    try {
      const account = await subject.createAccount();
      expect((await putPassword(subject.url, { email: account.email })).status).toBe(202);
      const token = tokenIn(await catcher.waitFor((m) => to(m) === account.email, 15_000));
      // The API's clock moves past the token's expiry instead of the test waiting for it.
      const expired = Date.now() + subject.config.resetTokenTtlSeconds * 1000 + 60_000;
      jest.spyOn(subject.app.get(Clock), 'now').mockImplementation(() => new Date(expired));
      const response = await putPassword(subject.url, { token, new: 'too late passphrase' });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ type: 'invalid-reset-token' });
    } finally {
      await subject.destroy();
      await catcher.stop();
    }
  });
});

describe('password e-mails without SMTP', () => {
  it('writes them as .eml files to DATA_DIR/outbox', async () => {
    const subject = await startTestApp();
    try {
      const account = await subject.createAccount();
      expect((await putPassword(subject.url, { email: account.email })).status).toBe(202);
      const { existsSync, readdirSync, readFileSync } = await import('node:fs');
      const { join } = await import('node:path');
      const outbox = join(subject.dataDir, 'outbox');
      const written = () => existsSync(outbox) && readdirSync(outbox).some((name) => name.endsWith('.eml'));
      await eventually('the .eml file', written);
      const file = readdirSync(outbox).find((name) => name.endsWith('.eml'))!;
      const eml = readFileSync(join(outbox, file), 'utf8');
      expect(eml).toContain(`To: ${account.email}`);
      expect(eml).toMatch(/reset-password\?token=[A-Za-z0-9_-]{64}/);
    } finally {
      await subject.destroy();
    }
  });
});
