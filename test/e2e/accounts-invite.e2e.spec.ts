import { EventStore } from '@chronicle/event-store';
import {
  linkTokenIn as tokenIn,
  recipientOf as to,
  SmtpCatcher,
  startSmtpCatcher,
} from '../support/smtp-catcher';
import { basic, issueToken, startTestApp, TestAccount, TestApp } from './support/test-app';

const PUBLIC_BASE_URL = 'https://accounts.example.test';
let addresses = 0;
const freshAddress = (name = 'invitee') => `${name}${++addresses}-${Date.now()}@example.com`;

describe('POST /api/v1/accounts (admin invitations)', () => {
  let catcher: SmtpCatcher;
  let subject: TestApp;
  let admin: TestAccount;
  let user: TestAccount;

  const invite = (body: unknown, { as = admin, contentType = 'application/json' } = {}) =>
    fetch(`${subject.url}/api/v1/accounts`, {
      method: 'POST',
      headers: { authorization: basic(as), 'content-type': contentType },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const putPassword = (body: unknown) =>
    fetch(`${subject.url}/api/v1/account/password`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const invitationTo = (email: string) =>
    catcher.waitFor(
      (mail) => to(mail) === email && /Your Chronicle account/.test(mail.subject ?? ''),
      15_000,
    );
  const logsIn = async (email: string, password: string) =>
    (
      await fetch(`${subject.url}/api/v1/account/tokens`, {
        method: 'POST',
        headers: { authorization: basic({ email, password }) },
      })
    ).status;

  beforeAll(async () => {
    catcher = await startSmtpCatcher();
    subject = await startTestApp({ env: { SMTP_URL: catcher.url, PUBLIC_BASE_URL, INVITATION_TTL: '3600' } });
    [admin, user] = await Promise.all([subject.createAccount({ admin: true }), subject.createAccount()]);
  });
  afterAll(async () => {
    await subject.destroy();
    await catcher.stop();
  });

  it('opens the account with its user (201, Location), mails one link, and the link sets the first password, once', async () => {
    const email = freshAddress();
    const response = await invite({ email, name: 'Grace Hopper', age: 45 });
    expect(response.status).toBe(201);
    const created = (await response.json()) as { accountId: string; userId: string };
    expect(Object.keys(created)).toEqual(['accountId', 'userId']);
    expect(response.headers.get('location')).toBe(`/users/${created.userId}`);
    // No usable password until the invitation is completed.
    expect(await logsIn(email, '')).toBe(401);

    const mail = await invitationTo(email);
    expect(mail.text).toContain(`${PUBLIC_BASE_URL}/reset-password?token=`);
    const invited = (await subject.app.get(EventStore).readStream(`account-${created.accountId}`)).find(
      (event) => event.type === 'AccountInvited.v1',
    )!;
    expect(mail.messageId).toContain(`invitation-${invited.id}`);
    expect(
      Date.parse((invited.data as { expiresAt: string }).expiresAt) - Date.parse(invited.recordedAt),
    ).toBeLessThanOrEqual(3_600_000);

    const token = tokenIn(mail);
    const [first, second] = [
      await putPassword({ token, new: 'grace first passphrase' }),
      await putPassword({ token, new: 'grace second passphrase' }),
    ];
    expect([first.status, second.status]).toEqual([204, 400]);
    expect(((await second.json()) as { type: string }).type).toBe('invalid-reset-token');

    expect(await logsIn(email, 'grace first passphrase')).toBe(201);
    expect(await logsIn(email, 'grace second passphrase')).toBe(401);
    const bearer = await issueToken(subject.url, { email, password: 'grace first passphrase' });
    const self = await fetch(`${subject.url}/users/${created.userId}`, {
      headers: { authorization: `Bearer ${bearer}` },
    });
    expect(await self.json()).toMatchObject({ id: created.userId, name: 'Grace Hopper', age: 45 });
    expect(catcher.messages.filter((m) => to(m) === email && m.messageId === mail.messageId)).toHaveLength(1);
    expect(
      catcher.messages.filter((m) => to(m) === email && /Your Chronicle account/.test(m.subject ?? '')),
    ).toHaveLength(1);
  });

  it('takes an invitation completed twice at once exactly once: one 204, one 400', async () => {
    const email = freshAddress('race');
    expect((await invite({ email, name: 'Race', age: 30 })).status).toBe(201);
    const token = tokenIn(await invitationTo(email));
    const statuses = await Promise.all(
      ['race passphrase one', 'race passphrase two'].map(async (password) => ({
        password,
        status: (await putPassword({ token, new: password })).status,
      })),
    );
    expect(statuses.map((result) => result.status).sort()).toEqual([204, 400]);
    const winner = statuses.find((result) => result.status === 204)!.password;
    const loser = statuses.find((result) => result.status === 400)!.password;
    expect(await logsIn(email, winner)).toBe(201);
    expect(await logsIn(email, loser)).toBe(401);
  });

  it('gives the roles asked for: an invited admin may list users', async () => {
    const email = freshAddress('admin');
    expect((await invite({ email, name: 'Ada', age: 36, roles: ['admin'] })).status).toBe(201);
    expect(
      (await putPassword({ token: tokenIn(await invitationTo(email)), new: 'ada admin passphrase' })).status,
    ).toBe(204);
    const users = await fetch(`${subject.url}/users`, {
      headers: { authorization: basic({ email, password: 'ada admin passphrase' }) },
    });
    expect(users.status).toBe(200);
  });

  it('answers 409 for an address that already has an account, however it is spelt', async () => {
    const response = await invite({ email: admin.email.toUpperCase(), name: 'Again', age: 30 });
    expect(response.status).toBe(409);
    expect(((await response.json()) as { type: string }).type).toBe('email-taken');
    const invited = freshAddress();
    expect((await invite({ email: invited, name: 'Once', age: 30 })).status).toBe(201);
    expect((await invite({ email: invited, name: 'Twice', age: 30 })).status).toBe(409);
  });

  it.each([
    [{ email: 'nope', name: 'A', age: 3 }, ['email']],
    [{ name: 'A', age: 3 }, ['email']],
    [{ email: 'x@example.com', name: '', age: 151 }, ['name', 'age']],
    [{ email: 'x@example.com', name: 'A', age: 3, roles: ['root'] }, ['roles']],
    [{ email: 'x@example.com', name: 'A', age: 3, roles: ['admin', 'auditor'] }, ['roles']],
    [{ email: 'x@example.com', name: 'A', age: 3, roles: 'admin' }, ['roles']],
    [{ email: 'x@example.com', name: 'A', age: 3, password: 'secret passphrase' }, ['password']],
  ])('refuses %j with 422 naming the fields, opening nothing', async (body, fields) => {
    const response = await invite(body);
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { errors: { field: string }[] };
    expect(problem.errors.map((error) => error.field).sort()).toEqual([...fields].sort());
  });

  it('is for admins only, takes JSON objects only', async () => {
    expect((await invite({ email: freshAddress(), name: 'A', age: 3 }, { as: user })).status).toBe(403);
    expect((await invite('[]')).status).toBe(400);
    expect(
      (await invite({ email: freshAddress(), name: 'A', age: 3 }, { contentType: 'text/plain' })).status,
    ).toBe(415);
  });

  it("never completes another account's reset, and dies when a password is set another way", async () => {
    const email = freshAddress();
    expect((await invite({ email, name: 'Linus', age: 50 })).status).toBe(201);
    const invitation = tokenIn(await invitationTo(email));
    // The invitee asks for a reset instead, and completes it: the invitation's token dies with it.
    expect((await putPassword({ email })).status).toBe(202);
    const reset = await catcher.waitFor(
      (mail) => to(mail) === email && /Reset/.test(mail.subject ?? ''),
      15_000,
    );
    expect((await putPassword({ token: tokenIn(reset), new: 'linus reset passphrase' })).status).toBe(204);
    expect((await putPassword({ token: invitation, new: 'linus invited passphrase' })).status).toBe(400);
    expect(await logsIn(email, 'linus reset passphrase')).toBe(201);
    // Another account's credentials never moved.
    expect(await logsIn(user.email, user.password)).toBe(201);
  });

  it('parks the invitation of a bouncing mailbox; the next invitation still goes out', async () => {
    const bouncing = freshAddress('bounce');
    const fine = freshAddress('fine');
    catcher.rejectRecipient(bouncing);
    expect((await invite({ email: bouncing, name: 'B', age: 30 })).status).toBe(201);
    expect((await invite({ email: fine, name: 'F', age: 30 })).status).toBe(201);
    await invitationTo(fine);
    const status = await fetch(`${subject.url}/api/v1/admin/projections`, {
      headers: { authorization: basic(admin) },
    });
    const { parked } = (await status.json()) as { parked: { type: string; reason: string }[] };
    expect(parked).toEqual([
      expect.objectContaining({ type: 'AccountInvited.v1', reason: expect.stringMatching(/550/) }),
    ]);
    expect(catcher.messages.filter((mail) => to(mail) === bouncing)).toEqual([]);
  });
});
