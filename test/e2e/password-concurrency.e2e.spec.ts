import { basic, issueToken, startTestApp, TestApp } from './support/test-app';

/** Real parallel requests against the running app: the races of issue 20, with their answers. */
describe('password changes under concurrent requests', () => {
  let subject: TestApp;

  beforeAll(async () => {
    subject = await startTestApp({ env: { ACCESS_TOKEN_TTL: '3600' } });
  });
  afterAll(() => subject.destroy());

  it('are never made to fail by tokens issued on the account meanwhile', async () => {
    const first = 'the first passphrase';
    const account = await subject.createAccount({ password: first });
    const token = await issueToken(subject.url, account);
    let changing = true;
    let minted = 0;
    // Two loops issue tokens on the account (each an append to its stream) for as long as the
    // changes run; once a change revokes their token they get 401s, which is as expected.
    const mint = async () => {
      while (changing) {
        const response = await fetch(`${subject.url}/api/v1/account/tokens`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
        });
        if (response.status === 201) minted++;
        await response.arrayBuffer();
      }
    };
    const loops = [mint(), mint()];
    const statuses: number[] = [];
    let current = first;
    try {
      for (let i = 1; i <= 5; i++) {
        const next = `passphrase number ${i} of five`;
        const response = await fetch(`${subject.url}/api/v1/account/password`, {
          method: 'PUT',
          headers: {
            authorization: basic({ email: account.email, password: current }),
            'content-type': 'application/json',
          },
          body: JSON.stringify({ old: current, new: next }),
        });
        statuses.push(response.status);
        if (response.status === 204) current = next;
      }
    } finally {
      changing = false;
      await Promise.all(loops);
    }
    expect(statuses).toEqual([204, 204, 204, 204, 204]);
    // The loops did race the first change: tokens were issued while it ran.
    expect(minted).toBeGreaterThan(0);
  }, 60_000);
});
