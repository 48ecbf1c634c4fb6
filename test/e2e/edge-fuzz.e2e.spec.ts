import fc from 'fast-check';
import { basic, issueToken, rawRequest, startTestApp, TestAccount, TestApp } from './support/test-app';

/**
 * Random and hostile query strings, headers and bodies against the busy routes and the password
 * route: whatever arrives, nothing answers 5xx, and every error is problem details.
 */
describe('the edge under random and hostile input', () => {
  let subject: TestApp;
  let account: TestAccount;
  let token: string;

  beforeAll(async () => {
    subject = await startTestApp();
    account = await subject.createAccount();
    token = await issueToken(subject.url, account);
    await subject.seedCustomers(20);
  });
  afterAll(() => subject.destroy());

  const hostileText = fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'),
    fc.constantFrom(
      '-0',
      '00',
      '1e3',
      '0x10',
      ' 7',
      '1.0',
      'NaN',
      'Infinity',
      '-',
      '+1',
      '%00',
      '%',
      '%E0%A4%A',
    ),
    fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
    fc.integer().map(String),
  );
  const name = fc.oneof(
    fc.constantFrom('page', 'gt', 'lt', 'maxpagesize', 'access_token', 'access%5Ftoken', 'ACCESS_TOKEN'),
    hostileText,
  );
  const queryString = fc
    .array(fc.tuple(name, hostileText, fc.boolean()), { maxLength: 5 })
    .map((pairs) =>
      pairs.length === 0
        ? ''
        : `?${pairs.map(([key, value, raw]) => `${raw ? key : encodeURIComponent(key)}=${raw ? value : encodeURIComponent(value)}`).join('&')}`,
    );

  /** Stands for the account's real token, known only once the app runs. */
  const VALID_TOKEN = 'Bearer <valid token>';
  /** Header values Node's client will send (printable ASCII), credentials real and forged. */
  const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,40}$/);
  const authorization = fc.oneof(
    fc.constant(null),
    fc.constant(VALID_TOKEN),
    fc.constant('Basic'),
    headerValue.map((value) => `Bearer ${value}`),
    headerValue.map((value) => `Basic ${Buffer.from(value).toString('base64')}`),
    headerValue.map((value) => `Basic ${value}`),
    headerValue,
  );
  const headers = fc.record({
    // Mostly the real token, so that most requests reach validation and the handler.
    authorization: fc.oneof(
      { weight: 3, arbitrary: fc.constant([VALID_TOKEN]) },
      fc.array(authorization, { maxLength: 2 }),
    ),
    accept: fc.option(
      fc.oneof(
        fc.constantFrom(
          '*/*',
          'application/vnd.chronicle.fragment+json;q=0.5, */*;q=0',
          'text/html',
          ';;;',
          'a/b;q=x',
        ),
        headerValue,
      ),
    ),
    contentType: fc.option(
      fc.oneof(
        fc.constantFrom(
          'application/json',
          'application/merge-patch+json',
          'application/merge-patch+json; charset=utf-8',
          'text/plain',
        ),
        headerValue,
      ),
    ),
    ifMatch: fc.option(fc.oneof(fc.constantFrom('*', '"1"', '"99999999999999999999"', 'W/"1"'), headerValue)),
  });

  const json = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.jsonValue({ maxDepth: 2 }),
      fc.dictionary(
        fc.oneof(hostileText, fc.constantFrom('name', 'age', 'email', 'token', 'new', 'old')),
        tie('value'),
        {
          maxKeys: 4,
        },
      ),
      fc.array(tie('value'), { maxLength: 3 }),
    ),
  })).value;
  const body = fc.option(
    fc.oneof(
      json.map((value) => JSON.stringify(value)),
      fc.integer({ min: 1, max: 3000 }).map((depth) => `{"token":${'['.repeat(depth)}${']'.repeat(depth)}}`),
      fc.string({ maxLength: 60 }),
      fc.constantFrom(
        '{"__proto__":{"admin":true}}',
        '{"token":{"constructor":{"prototype":{"x":1}}},"new":"p"}',
      ),
    ),
  );

  async function send(method: string, path: string, given: Record<string, unknown>, payload: string | null) {
    const raw: string[] = [];
    for (const value of given.authorization as (string | null)[]) {
      if (value !== null) raw.push('authorization', value === VALID_TOKEN ? `Bearer ${token}` : value);
    }
    if (given.accept !== null) raw.push('accept', given.accept as string);
    if (given.contentType !== null && payload !== null) raw.push('content-type', given.contentType as string);
    if (given.ifMatch !== null) raw.push('if-match', given.ifMatch as string);
    return rawRequest(`${subject.url}${path}`, method, raw, payload ?? undefined);
  }

  function expectWellFormed(response: {
    status: number;
    headers: Record<string, unknown>;
    body: string;
  }): void {
    expect(response.status).toBeLessThan(500);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    if (response.status >= 400) {
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(response.body)).toMatchObject({ status: response.status, type: expect.any(String) });
    }
  }

  const routes: [string, string, () => string][] = [
    ['GET', 'GET /customers', () => '/customers'],
    ['PATCH', 'PATCH /users/{id}', () => `/users/${account.userId}`],
    ['PUT', 'PUT /api/v1/account/password', () => '/api/v1/account/password'],
  ];

  it.each(routes)(
    '%s answers every request with a status below 500 and problem details',
    async (method, _name, path) => {
      await fc.assert(
        fc.asyncProperty(queryString, headers, body, async (query, given, payload) => {
          expectWellFormed(await send(method, `${path()}${query}`, given, method === 'GET' ? null : payload));
        }),
        { numRuns: 120 },
      );
    },
    120_000,
  );

  it('the random input did not lock the account out of its own routes', async () => {
    // The fuzzed PATCHes may have renamed the user; the credentials still work.
    const response = await rawRequest(`${subject.url}/customers`, 'GET', ['authorization', basic(account)]);
    expect(response.status).toBe(200);
  });
});
