import { basic, newDataDir, startTestApp } from './support/test-app';

describe('restart', () => {
  it('answers the same after the process stops and starts again on the same data', async () => {
    const dataDir = newDataDir();
    const first = await startTestApp({ dataDir });
    const account = await first.createAccount({ name: 'Before', age: 20 });
    await first.seedCustomers(30);
    const patched = await fetch(`${first.url}/users/${account.userId}`, {
      method: 'PATCH',
      headers: { authorization: basic(account), 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ name: 'After' }),
    });
    const before = { user: await patched.json(), etag: patched.headers.get('etag') };
    const customersBefore = await (
      await fetch(`${first.url}/customers?gt=5&lt=20`, { headers: { authorization: basic(account) } })
    ).json();
    await first.stop();

    const second = await startTestApp({ dataDir });
    try {
      const customers = await fetch(`${second.url}/customers?gt=5&lt=20`, {
        headers: { authorization: basic(account) },
      });
      expect(await customers.json()).toEqual(customersBefore);
      const again = await fetch(`${second.url}/users/${account.userId}`, {
        method: 'PATCH',
        headers: { authorization: basic(account), 'content-type': 'application/merge-patch+json' },
        body: '{}',
      });
      expect(await again.json()).toEqual(before.user);
      expect(again.headers.get('etag')).toBe(before.etag);
      // Numbering continues where it stopped: no id is handed out twice.
      await second.seedCustomers(1);
      const last = await fetch(`${second.url}/customers?gt=29`, {
        headers: { authorization: basic(account) },
      });
      expect(((await last.json()) as { id: number }[]).map((customer) => customer.id)).toEqual([30, 31]);
    } finally {
      await second.destroy();
    }
  });
});
