import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Clock } from '@chronicle/application';
import { Api, startApi, stopRunning } from '../support/app-process';
import { CLOCK_OFFSET_PRELOAD, createAccountWithCli, startSharedDoubles } from './support/api-process';
import { basic, issueToken, newDataDir, startTestApp, TestAccount, TestApp } from './support/test-app';

/** Revocation compares credentials versions; API.md says it reaches every instance within a second. */
const REVOCATION_REACH_MS = 1_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const mint = async (url: string, authorization: string) => {
  const response = await fetch(`${url}/api/v1/account/tokens`, {
    method: 'POST',
    headers: { authorization },
  });
  const body = (await response.json()) as { access_token?: string; expires_in?: number };
  return { status: response.status, token: body.access_token ?? null, expiresIn: body.expires_in };
};
const statusWith = (url: string, token: string) =>
  fetch(`${url}/customers`, { headers: { authorization: `Bearer ${token}` } }).then(async (response) => {
    await response.arrayBuffer();
    return response.status;
  });
const changePassword = async (url: string, account: { email: string; password: string }, next: string) => {
  const response = await fetch(`${url}/api/v1/account/password`, {
    method: 'PUT',
    headers: { authorization: basic(account), 'content-type': 'application/json' },
    body: JSON.stringify({ old: account.password, new: next }),
  });
  await response.arrayBuffer();
  return response.status;
};

interface Race {
  /** Every token minted with the old credentials, before the change's 204 or after it. */
  minted: string[];
  changeStatus: number;
}

/**
 * Loops mint tokens with the old password and an old token, against each of `urls` in turn, while
 * `change` replaces the password; they go on a while after its 204, so that requests authenticated
 * before the change finish after it.
 */
async function raceChange(
  urls: string[],
  change: () => Promise<number>,
  account: TestAccount,
  token: string,
) {
  const race: Race = { minted: [], changeStatus: 0 };
  let running = true;
  const loop = async (authorization: string, offset: number) => {
    for (let i = offset; running; i++) {
      const { status, token: minted } = await mint(urls[i % urls.length], authorization);
      if (status === 201 && minted) race.minted.push(minted);
      // A client stops at its first refused password, as it must: each further failed check counts
      // toward the address's login limit, and ten would lock out the new password too (a 429).
      if (status === 401 && authorization.startsWith('Basic ')) return;
    }
  };
  const loops = [0, 1, 2].flatMap((offset) => [
    loop(basic(account), offset),
    loop(`Bearer ${token}`, offset + 1),
  ]);
  await sleep(300);
  race.changeStatus = await change();
  const changedAt = Date.now();
  await sleep(300);
  running = false;
  await Promise.all(loops);
  await sleep(Math.max(0, changedAt + REVOCATION_REACH_MS - Date.now()));
  return race;
}

async function survivors(urls: string[], race: Race) {
  const alive: string[] = [];
  for (const token of race.minted) {
    for (const url of urls) if ((await statusWith(url, token)) !== 401) alive.push(`${url} ${token}`);
  }
  return alive;
}

describe('revocation by credentials version: tokens racing a password change', () => {
  let subject: TestApp;

  beforeAll(async () => {
    subject = await startTestApp();
  });
  afterAll(() => subject.destroy());

  it('leaves no token minted with the old password or an old token alive after the change', async () => {
    const account = await subject.createAccount();
    const token = await issueToken(subject.url, account);

    const race = await raceChange(
      [subject.url],
      () => changePassword(subject.url, account, 'the passphrase after the race'),
      account,
      token,
    );

    expect(race.changeStatus).toBe(204);
    expect(race.minted.length).toBeGreaterThan(0);
    expect(await survivors([subject.url], race)).toEqual([]);
    // The new password goes on working.
    expect(
      (await mint(subject.url, basic({ ...account, password: 'the passphrase after the race' }))).status,
    ).toBe(201);
  }, 60_000);

  it('leaves none alive after a reset either', async () => {
    const account = await subject.createAccount();
    const token = await issueToken(subject.url, account);
    const requested = await fetch(`${subject.url}/api/v1/account/password`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: account.email }),
    });
    expect(requested.status).toBe(202);
    const resetToken = await resetTokenFor(subject.dataDir, account.email);

    const race = await raceChange(
      [subject.url],
      async () => {
        const response = await fetch(`${subject.url}/api/v1/account/password`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token: resetToken, new: 'the passphrase after the reset' }),
        });
        await response.arrayBuffer();
        return response.status;
      },
      account,
      token,
    );

    expect(race.changeStatus).toBe(204);
    expect(race.minted.length).toBeGreaterThan(0);
    expect(await survivors([subject.url], race)).toEqual([]);
  }, 60_000);
});

/** The reset token in the e-mail written to DATA_DIR/outbox for `email` (no SMTP_URL: .eml files). */
async function resetTokenFor(dataDir: string, email: string): Promise<string> {
  const outbox = join(dataDir, 'outbox');
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const files = existsSync(outbox) ? readdirSync(outbox).filter((name) => name.endsWith('.eml')) : [];
    for (const file of files) {
      const eml = readFileSync(join(outbox, file), 'utf8');
      const token = /[?&]token=([A-Za-z0-9_-]+)/.exec(eml);
      if (eml.includes(email) && token) return token[1];
    }
    await sleep(50);
  }
  throw new Error(`no reset e-mail for ${email}`);
}

/**
 * Two API processes on the EventStoreDB and MongoDB wire doubles with one TOKEN_SECRET, the second
 * with its clock two minutes ahead (a preload offsets Date): no instant from either decides.
 */
describe('revocation across two API instances, one with a skewed clock', () => {
  const dataDir = newDataDir();
  let straight: Api;
  let skewed: Api;
  let stopDoubles: () => Promise<void>;
  let env: Record<string, string>;
  const createAccount = () => createAccountWithCli(dataDir, env);

  beforeAll(async () => {
    const doubles = await startSharedDoubles(dataDir, 'revocation');
    stopDoubles = doubles.stop;
    env = { ...doubles.env, ACCESS_TOKEN_TTL: '3600' };
    [straight, skewed] = await Promise.all([
      startApi(dataDir, env),
      startApi(dataDir, { ...env, CLOCK_OFFSET_MS: '120000' }, { preloads: [CLOCK_OFFSET_PRELOAD] }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await stopRunning();
    await stopDoubles?.();
  });

  it('runs the second instance two minutes ahead', async () => {
    const account = await createAccount();
    const { token } = await mint(skewed.url, basic(account));
    const claims = JSON.parse(Buffer.from(token!.split('.')[1], 'base64url').toString()) as number[];
    expect(claims[4] - Date.now()).toBeGreaterThan(110_000);
  });

  it('kills tokens minted on both instances, alternately, at a change made on one', async () => {
    const account = await createAccount();
    const token = await issueToken(skewed.url, account);

    const race = await raceChange(
      [straight.url, skewed.url],
      () => changePassword(straight.url, account, 'the passphrase after the race'),
      account,
      token,
    );

    expect(race.changeStatus).toBe(204);
    expect(race.minted.length).toBeGreaterThan(0);
    expect(await survivors([straight.url, skewed.url], race)).toEqual([]);
  }, 60_000);

  it('ends a session on every instance within a second of its end on one', async () => {
    const account = await createAccount();
    const first = await issueToken(straight.url, account);
    const second = (await mint(skewed.url, `Bearer ${first}`)).token!;
    expect(await statusWith(straight.url, second)).toBe(200);

    const ended = await fetch(`${skewed.url}/api/v1/account/tokens/current`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${second}` },
    });
    expect(ended.status).toBe(204);
    await sleep(REVOCATION_REACH_MS);

    for (const url of [straight.url, skewed.url]) {
      expect(await statusWith(url, first)).toBe(401);
      expect(await statusWith(url, second)).toBe(401);
    }
  }, 30_000);

  it.each([
    ['the skewed instance', 'the other', () => [skewed, straight]],
    ['the straight instance', 'the skewed one', () => [straight, skewed]],
  ])(
    'kills tokens issued on %s at a change made on %s, on both, within a second',
    async (_a, _b, pick) => {
      const [issuer, changer] = pick();
      const account = await createAccount();
      const token = await issueToken(issuer.url, account);
      expect(await statusWith(changer.url, token)).toBe(200);

      expect(await changePassword(changer.url, account, 'a passphrase set elsewhere')).toBe(204);
      await sleep(REVOCATION_REACH_MS);

      expect(await statusWith(issuer.url, token)).toBe(401);
      expect(await statusWith(changer.url, token)).toBe(401);
    },
    30_000,
  );
});

describe('sessions', () => {
  let subject: TestApp;

  beforeAll(async () => {
    subject = await startTestApp({ env: { ACCESS_TOKEN_TTL: '3600' } });
  });
  afterAll(() => subject.destroy());

  it('a token minted with a bearer token joins its session and expires no later than its first token', async () => {
    const account = await subject.createAccount();
    const first = await issueToken(subject.url, account);
    // The API's clock half an hour on: the minted token gets what is left of the session, not an hour.
    const clock = subject.app.get(Clock);
    const later = Date.now() + 1_800_000;
    const now = jest.spyOn(clock, 'now').mockImplementation(() => new Date(later));
    try {
      const second = await mint(subject.url, `Bearer ${first}`);
      expect(second.status).toBe(201);
      expect(second.expiresIn).toBeLessThanOrEqual(1_800);
      const third = await mint(subject.url, `Bearer ${second.token}`);
      expect(third.expiresIn).toBeLessThanOrEqual(1_800);

      // Past the first token's expiry, every token of the session has expired with it.
      now.mockImplementation(() => new Date(Date.now() + 3_600_000));
      expect(await statusWith(subject.url, second.token!)).toBe(401);
      expect(await statusWith(subject.url, third.token!)).toBe(401);
    } finally {
      now.mockRestore();
    }
  });

  it('DELETE /api/v1/account/tokens/current ends the whole session, and only it', async () => {
    const account = await subject.createAccount();
    const first = await issueToken(subject.url, account);
    const second = (await mint(subject.url, `Bearer ${first}`)).token!;
    const third = (await mint(subject.url, `Bearer ${second}`)).token!;
    const otherSession = await issueToken(subject.url, account);

    const ended = await fetch(`${subject.url}/api/v1/account/tokens/current`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${second}` },
    });

    expect(ended.status).toBe(204);
    for (const token of [first, second, third]) expect(await statusWith(subject.url, token)).toBe(401);
    expect((await mint(subject.url, `Bearer ${first}`)).status).toBe(401);
    expect(await statusWith(subject.url, otherSession)).toBe(200);
  });

  it('the audit links each token to its session, and each session to how it began', async () => {
    const admin = await subject.createAccount({ admin: true });
    const account = await subject.createAccount();
    const first = await issueToken(subject.url, account);
    const second = (await mint(subject.url, `Bearer ${first}`)).token!;
    await fetch(`${subject.url}/api/v1/account/tokens/current`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${second}` },
    });
    const claims = (token: string) =>
      JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as [string, string, string];
    const [, firstId, sessionId] = claims(first);
    const [, secondId] = claims(second);

    const response = await fetch(`${subject.url}/api/v1/audit/events?stream=session-${sessionId}`, {
      headers: { authorization: basic(admin) },
    });
    const records = (await response.json()) as Array<{ type: string; data: Record<string, unknown> }>;

    expect(records.map((record) => [record.type, record.data])).toEqual([
      [
        'SessionStarted.v1',
        expect.objectContaining({ accountId: account.accountId, sessionId, startedWith: 'basic' }),
      ],
      ['SessionTokenIssued.v1', expect.objectContaining({ sessionId, tokenId: firstId, issuedWith: null })],
      [
        'SessionTokenIssued.v1',
        expect.objectContaining({ sessionId, tokenId: secondId, issuedWith: firstId }),
      ],
      ['SessionEnded.v1', expect.objectContaining({ sessionId, endedWith: secondId })],
    ]);
  });
});
