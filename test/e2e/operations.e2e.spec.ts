import { basic, startTestApp, TestAccount, TestApp } from './support/test-app';

describe('errors and operations', () => {
  let subject: TestApp;
  let account: TestAccount;

  beforeAll(async () => {
    subject = await startTestApp();
    account = await subject.createAccount();
  });
  afterAll(() => subject.destroy());

  const expectProblem = async (response: Response, status: number) => {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await response.json()) as Record<string, unknown>;
    expect(problem).toMatchObject({ status, type: expect.any(String), title: expect.any(String) });
    expect(JSON.stringify(problem)).not.toMatch(/\bat .+\.(ts|js):\d+/);
    return problem;
  };

  it('answers an unknown route with a 404 problem', async () => {
    await expectProblem(
      await fetch(`${subject.url}/nowhere`, { headers: { authorization: basic(account) } }),
      404,
    );
  });

  it('answers a body over 64 KiB with a 413 problem', async () => {
    const response = await fetch(`${subject.url}/users/${account.userId}`, {
      method: 'PATCH',
      headers: { authorization: basic(account), 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ name: 'x'.repeat(70 * 1024) }),
    });
    await expectProblem(response, 413);
  });

  it('echoes a safe X-Request-Id and replaces an unsafe one', async () => {
    const echoed = await fetch(`${subject.url}/health/live`, { headers: { 'x-request-id': 'abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123');
    const replaced = await fetch(`${subject.url}/health/live`, {
      headers: { 'x-request-id': 'bad id\u0001'.replace('\u0001', '%') },
    });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const generated = await fetch(`${subject.url}/nowhere`);
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves liveness and readiness without credentials', async () => {
    const live = await fetch(`${subject.url}/health/live`);
    expect(live.status).toBe(200);
    const ready = await fetch(`${subject.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ok',
      info: { eventStore: { status: 'up' }, readStore: { status: 'up' } },
    });
  });

  it('serves the OpenAPI 3.1 document and its UI without credentials', async () => {
    const response = await fetch(`${subject.url}/docs/json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/customers',
        '/users/{userId}',
        '/api/v1/account/tokens',
        '/api/v1/account/tokens/current',
      ]),
    );
    const ui = await fetch(`${subject.url}/docs`);
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toMatch(/text\/html/);
  });
});
