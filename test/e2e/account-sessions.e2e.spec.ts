import { AccountSessions } from '@chronicle/auth';
import { basic, issueToken, startTestApp, TestApp } from './support/test-app';

/**
 * The API applies its own revocations at once, not when its subscription brings their events
 * round. The subscription is usually fast enough to hide a missing direct call, so here it is
 * stopped: only the direct call can revoke.
 */
describe("the API's own revocations, while its sessions subscription lags", () => {
  let subject: TestApp;

  const customers = (authorization: string) =>
    fetch(`${subject.url}/customers`, { headers: { authorization } }).then((response) => response.status);

  beforeEach(async () => {
    subject = await startTestApp();
  });
  afterEach(() => subject.destroy());

  /** A bearer token whose session is known, then no more events reach the sessions. */
  async function tokenThenLag() {
    const account = await subject.createAccount();
    const bearer = `Bearer ${await issueToken(subject.url, account)}`;
    expect(await customers(bearer)).toBe(200);
    expect(await customers(basic(account))).toBe(200);
    await subject.app.get(AccountSessions).stop();
    return { account, bearer };
  }

  it('DELETE /api/v1/account/tokens/current: the token stops working with the 204', async () => {
    const { bearer } = await tokenThenLag();

    const revoked = await fetch(`${subject.url}/api/v1/account/tokens/current`, {
      method: 'DELETE',
      headers: { authorization: bearer },
    });

    expect(revoked.status).toBe(204);
    expect(await customers(bearer)).toBe(401);
  });

  it('a password change: older tokens and the cached Basic credentials stop working with the 204', async () => {
    const { account, bearer } = await tokenThenLag();

    const changed = await fetch(`${subject.url}/api/v1/account/password`, {
      method: 'PUT',
      headers: { authorization: basic(account), 'content-type': 'application/json' },
      body: JSON.stringify({ old: account.password, new: 'a changed passphrase' }),
    });

    expect(changed.status).toBe(204);
    expect(await customers(bearer)).toBe(401);
    expect(await customers(basic(account))).toBe(401);
    expect(await customers(basic({ ...account, password: 'a changed passphrase' }))).toBe(200);
  });
});
