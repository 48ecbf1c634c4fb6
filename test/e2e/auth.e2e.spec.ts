import { execFile } from 'node:child_process';
import { get } from 'node:http';
import { promisify } from 'node:util';
import * as argon2 from 'argon2';
import { Clock, SYSTEM_ACTOR, SYSTEM_AUTH, toNewEvent } from '@chronicle/application';
import { accountStreamName } from '@chronicle/domain';
import { EventStore } from '@chronicle/event-store';
import { ARGON2_OPTIONS } from '../../libs/auth/src/argon2-password-hasher';
import { basic, issueToken, rawRequest, startTestApp, TestAccount, TestApp } from './support/test-app';

const run = promisify(execFile);

describe('authentication', () => {
  let subject: TestApp;
  let account: TestAccount;

  const customers = (headers: Record<string, string> = {}, query = '') =>
    fetch(`${subject.url}/customers${query}`, { headers });

  const expectChallenge = (response: Response, invalidToken: boolean) => {
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain('Bearer realm="api"');
    expect(challenge).toContain('Basic realm="api", charset="UTF-8"');
    expect(challenge.includes('error="invalid_token"')).toBe(invalidToken);
  };

  beforeAll(async () => {
    subject = await startTestApp({ env: { ACCESS_TOKEN_TTL: '3600' } });
    account = await subject.createAccount();
  });
  afterAll(() => subject.destroy());

  it('accepts Basic credentials (e-mail and password)', async () => {
    expect((await customers({ authorization: basic(account) })).status).toBe(200);
  });

  it('accepts the e-mail address in any case', async () => {
    const shouted = { email: account.email.toUpperCase(), password: account.password };
    expect((await customers({ authorization: basic(shouted) })).status).toBe(200);
  });

  // "café" with a precomposed é (NFC), and with e + combining acute (NFD), as some systems type it.
  const NFC = 'caf\u00e9 au lait, s\u2019il vous pla\u00eet';
  const NFD = NFC.normalize('NFD');

  it('takes a password in any Unicode normalisation form (RFC 8265 OpaqueString)', async () => {
    const typed = await subject.createAccount({ password: NFC });
    expect((await customers({ authorization: basic({ email: typed.email, password: NFD }) })).status).toBe(
      200,
    );
    expect((await customers({ authorization: basic({ email: typed.email, password: NFC }) })).status).toBe(
      200,
    );
  });

  it('still takes a password hashed as sent before passwords were prepared, and rehashes it', async () => {
    const old = await subject.createAccount();
    const store = subject.app.get(EventStore);
    const stream = accountStreamName(old.accountId);
    // How an older build stored a password sent in NFD: hashed as sent.
    const change = {
      type: 'PasswordChanged.v1' as const,
      data: {
        accountId: old.accountId,
        passwordHash: await argon2.hash(NFD, ARGON2_OPTIONS),
        changedAt: new Date().toISOString(),
        credentialsVersion: 1,
      },
    };
    const context = { actor: SYSTEM_ACTOR, correlationId: 'legacy-hash', auth: SYSTEM_AUTH };
    await store.append(stream, [toNewEvent(change, context, new Date())], 'any');

    expect((await customers({ authorization: basic({ email: old.email, password: NFD }) })).status).toBe(200);
    const types = (await store.readStream(stream)).map((event) => event.type);
    expect(types.at(-1)).toBe('PasswordRehashed.v1');
    // Now hashed as prepared: the other spelling works too, and no token was revoked by it.
    expect((await customers({ authorization: basic({ email: old.email, password: NFC }) })).status).toBe(200);
  });

  /** The URL with the account's credentials as user-info: `http://user:password@host/path`. */
  const withUserInfo = (path: string, credentials: { email: string; password: string }) => {
    const url = new URL(path, subject.url);
    url.username = encodeURIComponent(credentials.email);
    url.password = encodeURIComponent(credentials.password);
    return url.toString();
  };

  it('accepts credentials in the URL user-info (sent as Basic)', async () => {
    // fetch refuses such a URL; node:http and curl take the user-info out and send it as Basic.
    const status = (url: string) =>
      new Promise<number>((resolve, reject) => {
        get(url, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        }).on('error', reject);
      });
    expect(await status(withUserInfo('/customers', account))).toBe(200);
    expect(await status(withUserInfo('/customers', { ...account, password: 'not the password' }))).toBe(401);
    const curl = async (url: string) =>
      (await run('curl', ['--silent', '--output', '/dev/null', '--write-out', '%{http_code}', url])).stdout;
    expect(await curl(withUserInfo('/customers', account))).toBe('200');
    expect(await curl(withUserInfo('/customers', { ...account, password: 'not the password' }))).toBe('401');
  });

  it('issues a bearer token that works in the header and in the query', async () => {
    const response = await fetch(`${subject.url}/api/v1/account/tokens`, {
      method: 'POST',
      headers: { authorization: basic(account) },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 });
    const token = body.access_token as string;
    expect((await customers({ authorization: `Bearer ${token}` })).status).toBe(200);
    const byQuery = await customers({}, `?access_token=${encodeURIComponent(token)}`);
    expect(byQuery.status).toBe(200);
    expect(byQuery.headers.get('cache-control')).toBe('no-store');
    expect(byQuery.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('issues a token to a bearer-authenticated request too', async () => {
    const token = await issueToken(subject.url, account);
    const response = await fetch(`${subject.url}/api/v1/account/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(201);
  });

  it('revokes the current token: it stops working, others keep working', async () => {
    const [revoked, kept] = [await issueToken(subject.url, account), await issueToken(subject.url, account)];
    const response = await fetch(`${subject.url}/api/v1/account/tokens/current`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${revoked}` },
    });
    expect(response.status).toBe(204);
    const after = await customers({ authorization: `Bearer ${revoked}` });
    expect(after.status).toBe(401);
    expectChallenge(after, true);
    expect((await customers({ authorization: `Bearer ${kept}` })).status).toBe(200);
  });

  it('refuses to revoke "current" for a Basic request, which carries no token', async () => {
    const response = await fetch(`${subject.url}/api/v1/account/tokens/current`, {
      method: 'DELETE',
      headers: { authorization: basic(account) },
    });
    expect(response.status).toBe(400);
  });

  it('answers 401 with both challenges when no credentials are sent', async () => {
    const response = await customers();
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expectChallenge(response, false);
  });

  it.each([
    ['a wrong password', () => basic({ email: account.email, password: 'wrong-password' })],
    ['an unknown e-mail', () => basic({ email: 'nobody@example.com', password: 'whatever-123' })],
    ['malformed Basic', () => 'Basic !!!notbase64'],
    ['an unknown scheme', () => 'Digest username="x"'],
  ])('answers 401 for %s', async (_case, header) => {
    const response = await customers({ authorization: header() });
    expect(response.status).toBe(401);
    expectChallenge(response, false);
  });

  it.each([
    ['a garbage token', 'garbage'],
    ['a forged token', 'ct1.WyJ4IiwieSIsMSwxXQ.AAAA'],
  ])('answers 401 with error="invalid_token" for %s', async (_case, token) => {
    const response = await customers({ authorization: `Bearer ${token}` });
    expect(response.status).toBe(401);
    expectChallenge(response, true);
    const byQuery = await customers({}, `?access_token=${token}`);
    expect(byQuery.status).toBe(401);
  });

  it('answers 400 for two ways of sending credentials at once', async () => {
    const token = await issueToken(subject.url, account);
    const cases: [string, string[]][] = [
      [`/customers?access_token=${token}`, ['authorization', `Bearer ${token}`]],
      [`/customers?access_token=${token}`, ['authorization', basic(account)]],
      ['/customers', ['authorization', `Bearer ${token}`, 'authorization', basic(account)]],
      ['/customers', ['authorization', basic(account), 'authorization', basic(account)]],
    ];
    for (const [path, headers] of cases) {
      const response = await rawRequest(`${subject.url}${path}`, 'GET', headers);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(response.body)).toMatchObject({ status: 400, type: 'multiple-credentials' });
    }
  });
});

// Its own app: passport's strategies are process-wide, so two apps must not run at once.
describe('access token expiry', () => {
  it('answers 401 for an expired token', async () => {
    const subject = await startTestApp();
    try {
      const account = await subject.createAccount();
      const token = await issueToken(subject.url, account);
      const withToken = () =>
        fetch(`${subject.url}/customers`, { headers: { authorization: `Bearer ${token}` } });
      expect((await withToken()).status).toBe(200);
      // The API's clock moves past the expiry instead of the test waiting for it.
      const expired = Date.now() + subject.config.accessTokenTtlSeconds * 1000;
      jest.spyOn(subject.app.get(Clock), 'now').mockImplementation(() => new Date(expired));
      const response = await withToken();
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
    } finally {
      await subject.destroy();
    }
  });
});
