import { userInfo } from 'node:os';
import { jsonLines, runCliProcess } from './support/cli-process';
import { basic, issueToken, startTestApp, TestAccount, TestApp } from './support/test-app';

/** Who wrote what, in a way no client can forge (issue 22). */
describe('provenance of writes', () => {
  let subject: TestApp;
  let admin: TestAccount;

  const audit = async (query: string): Promise<Array<Record<string, any>>> => {
    const response = await fetch(`${subject.url}/api/v1/audit/events${query}`, {
      headers: { authorization: basic(admin) },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Array<Record<string, any>>;
  };

  beforeAll(async () => {
    subject = await startTestApp();
    admin = await subject.createAccount({ admin: true });
  });
  afterAll(() => subject.destroy());

  it('records the CLI run as cli:<OS user>, authenticated by the CLI', async () => {
    const created = await runCliProcess(
      subject.dataDir,
      'customers',
      'create',
      '--name',
      'Cli Customer',
      '--email',
      'cli-customer@example.com',
    );
    expect(created.code).toBe(0);
    const [{ id }] = jsonLines(created.stdout);
    const [record] = await audit(`?stream=customer-${id}`);
    expect(record).toMatchObject({
      actor: `cli:${userInfo().username}`,
      correlationId: expect.stringMatching(/^cli-[0-9a-f-]{36}$/),
      clientRequestId: null,
      auth: { method: 'cli', tokenId: null },
    });
  });

  it("never lets a client's X-Request-Id join another's work: it is echoed and kept as the client's own", async () => {
    const cliRun = (await audit('?type=CustomerRegistered.v1')).find((record) =>
      record.actor.startsWith('cli:'),
    )!;
    const response = await fetch(`${subject.url}/api/v1/account/password`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-request-id': cliRun.correlationId },
      body: JSON.stringify({ email: 'nobody@example.com' }),
    });
    expect(response.status).toBe(202);
    expect(response.headers.get('x-request-id')).toBe(cliRun.correlationId);
    const [requested] = await audit('?type=PasswordResetRequested.v2');
    expect(requested).toMatchObject({
      actor: 'anonymous',
      clientRequestId: cliRun.correlationId,
      auth: { method: 'none', tokenId: null },
    });
    expect(requested.correlationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(requested.correlationId).not.toBe(cliRun.correlationId);
  });

  it('records the access token a write was made with by its id, never the token', async () => {
    const member = await subject.createAccount({ name: 'Member' });
    const token = await issueToken(subject.url, member);
    const patched = await fetch(`${subject.url}/users/${member.userId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ age: 44 }),
    });
    expect(patched.status).toBe(200);
    const history = await audit(`?stream=user-${member.userId}`);
    const patch = history.find((record) => record.type === 'UserPatched.v1')!;
    expect(patch.actor).toBe(member.accountId);
    expect(patch.auth).toEqual({ method: 'bearer', tokenId: expect.any(String) });
    // The same id the token's issue was recorded under, in its session's stream.
    const [issued] = await audit('?type=SessionTokenIssued.v1&actor=' + member.accountId);
    expect(issued.data.tokenId).toBe(patch.auth.tokenId);
    expect(issued.auth).toEqual({ method: 'basic', tokenId: null });
    const everything = JSON.stringify(await audit('?limit=1000'));
    expect(everything).not.toContain(token);
  });
});
