import { Api, startApi, stopRunning } from '../support/app-process';
import { createAccountWithCli, startSharedDoubles } from './support/api-process';
import { clearOfLimitWindowEnd } from './support/limit-window';
import { basic, issueToken, newDataDir, startTestApp, TestApp } from './support/test-app';

interface Answer {
  status: number;
  retryAfter: string | null;
  body: string;
}

/** Each test speaks from its own client address (TRUST_PROXY lets X-Forwarded-For name it). */
let clients = 0;
const newClient = () => `198.51.100.${++clients}`;

async function answer(response: Response): Promise<Answer> {
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: await response.text(),
  };
}

const login = (url: string, client: string, credentials: { email: string; password: string }) =>
  fetch(`${url}/customers`, {
    headers: { authorization: basic(credentials), 'x-forwarded-for': client },
  }).then(answer);

const resetRequest = (url: string, client: string, email: string) =>
  fetch(`${url}/api/v1/account/password`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
    body: JSON.stringify({ email }),
  }).then(answer);

/** The 429 body without its request-specific members. */
const shape = (body: string) => {
  const { type, title, status, detail } = JSON.parse(body) as Record<string, unknown>;
  return { type, title, status, detail };
};

const LIMITS = {
  TRUST_PROXY: 'true',
  LOGIN_ATTEMPTS_PER_ACCOUNT: '3',
  LOGIN_ATTEMPTS_PER_CLIENT: '6',
  RESET_REQUESTS_PER_EMAIL: '2',
  RESET_REQUESTS_PER_CLIENT: '4',
};

// Every test here counts up to a limit.
beforeEach(() => clearOfLimitWindowEnd(), 20_000);

describe('failed-login limits', () => {
  let subject: TestApp;

  beforeAll(async () => {
    subject = await startTestApp({ env: LIMITS });
  });
  afterAll(() => subject.destroy());

  it('refuse an address after its failures with 429 and Retry-After, the same for an unknown one', async () => {
    const account = await subject.createAccount();
    const unknown = { email: `nobody-${Date.now()}@example.com`, password: 'a wrong guess' };
    const sequences: Answer[][] = [];
    for (const target of [account, unknown]) {
      const answers: Answer[] = [];
      // One client per guess: only the address's limit is in play.
      for (let i = 0; i < 3; i++)
        answers.push(await login(subject.url, newClient(), { ...target, password: `guess ${i}` }));
      // Past the limit even the right password is refused: no hash is spent to find out.
      answers.push(await login(subject.url, newClient(), target));
      sequences.push(answers);
    }

    for (const answers of sequences) {
      expect(answers.map(({ status }) => status)).toEqual([401, 401, 401, 429]);
      const limited = answers[3];
      expect(Number(limited.retryAfter)).toBeGreaterThan(0);
      expect(Number(limited.retryAfter)).toBeLessThanOrEqual(900);
    }
    expect(shape(sequences[0][3].body)).toEqual(shape(sequences[1][3].body));
    expect(shape(sequences[0][3].body)).toMatchObject({ status: 429, type: 'too-many-requests' });
  });

  const change = (
    client: string,
    authorization: string,
    passwords: { old: string; new?: string },
  ): Promise<Answer> =>
    fetch(`${subject.url}/api/v1/account/password`, {
      method: 'PUT',
      headers: { authorization, 'content-type': 'application/json', 'x-forwarded-for': client },
      body: JSON.stringify({ new: 'a new long passphrase', ...passwords }),
    }).then(answer);

  it("never let a stranger's guesses stand between the owner and a change of its password", async () => {
    const account = await subject.createAccount();
    const owner = newClient();
    const token = await fetch(`${subject.url}/api/v1/account/tokens`, {
      method: 'POST',
      headers: { authorization: basic(account), 'x-forwarded-for': owner },
    }).then(async (response) => ((await response.json()) as { access_token: string }).access_token);
    const stranger = newClient();
    const guesses: number[] = [];
    for (let i = 0; i < 4; i++)
      guesses.push((await login(subject.url, stranger, { ...account, password: `guess ${i}` })).status);
    expect(guesses).toEqual([401, 401, 401, 429]);

    // The owner's token and right old password change it.
    const changed = await change(owner, `Bearer ${token}`, {
      old: account.password,
      new: 'renewed passphrase 1',
    });
    expect(changed.status).toBe(204);
    const renewed = { ...account, password: 'renewed passphrase 1' };
    // A new address is refused like the stranger's: the address is under attack.
    expect((await login(subject.url, newClient(), renewed)).status).toBe(429);
    // The address the owner logged in from is not: Basic alone changes it again.
    expect(
      (await change(owner, basic(renewed), { old: renewed.password, new: 'renewed passphrase 2' })).status,
    ).toBe(204);
  });

  it("count a wrong old password against the account's own limit, which only its holder can reach", async () => {
    const account = await subject.createAccount();
    const client = newClient();
    const token = `Bearer ${await issueToken(subject.url, account)}`;

    expect((await change(client, token, { old: 'wrong old 1' })).status).toBe(400);
    expect((await change(client, token, { old: 'wrong old 2' })).status).toBe(400);
    // A stranger's guesses at the address count nowhere near the change.
    for (let i = 0; i < 4; i++) await login(subject.url, newClient(), { ...account, password: `guess ${i}` });
    expect((await change(client, token, { old: 'wrong old 3' })).status).toBe(400);

    // The holder's own failures do.
    const limited = await change(client, token, { old: account.password });
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
  });

  it('refuse a client after its failures on any addresses, before counting anything for a new address', async () => {
    const client = newClient();
    const guesses = Array.from({ length: 6 }, (_, i) => ({
      email: `spray${i}-${Date.now()}@example.com`,
      password: 'x',
    }));
    for (const guess of guesses) expect((await login(subject.url, client, guess)).status).toBe(401);

    const fresh = { email: `fresh-${Date.now()}@example.com`, password: 'y' };
    expect((await login(subject.url, client, fresh)).status).toBe(429);
    // The address itself was never counted: from another client it has its whole allowance.
    for (let i = 0; i < 3; i++) expect((await login(subject.url, newClient(), fresh)).status).toBe(401);
    expect((await login(subject.url, newClient(), fresh)).status).toBe(429);
  });
});

describe('limits kept across a restart', () => {
  it('keeps failed-login and reset-request counts', async () => {
    const dataDir = newDataDir();
    let subject = await startTestApp({ dataDir, env: LIMITS });
    const account = await subject.createAccount();
    try {
      for (let i = 0; i < 3; i++) {
        expect((await login(subject.url, newClient(), { ...account, password: `guess ${i}` })).status).toBe(
          401,
        );
      }
      for (let i = 0; i < 2; i++)
        expect((await resetRequest(subject.url, newClient(), account.email)).status).toBe(202);
      await subject.stop();

      subject = await startTestApp({ dataDir, env: LIMITS });

      expect((await login(subject.url, newClient(), account)).status).toBe(429);
      expect((await resetRequest(subject.url, newClient(), account.email)).status).toBe(429);
    } finally {
      await subject.destroy();
    }
  }, 60_000);
});

/** Two API processes on the wire doubles: the counts live in MongoDB, not in either process. */
describe('limits shared by two API instances', () => {
  const dataDir = newDataDir();
  let env: Record<string, string>;
  let instances: Api[] = [];
  let stopDoubles: () => Promise<void>;

  beforeAll(async () => {
    const doubles = await startSharedDoubles(dataDir, 'limits');
    stopDoubles = doubles.stop;
    env = { ...doubles.env, ...LIMITS };
    instances = await Promise.all([startApi(dataDir, env), startApi(dataDir, env)]);
  }, 60_000);
  afterAll(async () => {
    await stopRunning();
    await stopDoubles?.();
  });

  const alternate = async (times: number, request: (url: string) => Promise<Answer>) => {
    const statuses: number[] = [];
    for (let i = 0; i < times; i++) statuses.push((await request(instances[i % 2].url)).status);
    return statuses;
  };

  it('hold the failed-login limit of an address, alternating', async () => {
    const account = await createAccountWithCli(dataDir, env);
    const statuses = await alternate(6, (url) =>
      login(url, newClient(), { ...account, password: 'a wrong guess' }),
    );
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
  }, 30_000);

  it('hold the failed-login limit of a client, alternating', async () => {
    const client = newClient();
    const statuses = await alternate(8, (url) =>
      login(url, client, { email: `spray-${Math.random()}@example.com`, password: 'x' }),
    );
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429, 429]);
  }, 30_000);

  it('hold the reset-request limits of an address and of a client, alternating', async () => {
    const email = `reset-${Date.now()}@example.com`;
    expect(await alternate(4, (url) => resetRequest(url, newClient(), email))).toEqual([202, 202, 429, 429]);
    const client = newClient();
    expect(
      await alternate(6, (url) => resetRequest(url, client, `reset-${Math.random()}@example.com`)),
    ).toEqual([202, 202, 202, 202, 429, 429]);
  }, 30_000);
});
