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
    // A changed customer comes back changed: from the snapshot on the embedded default.
    const admin = await first.createAccount({ admin: true });
    const changed = await fetch(`${first.url}/customers/7`, {
      method: 'PATCH',
      headers: { authorization: basic(admin), 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ email: 'changed@example.com' }),
    });
    expect(changed.status).toBe(200);
    await first.settle();
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
      expect((customersBefore as { email: string }[])[1].email).toBe('changed@example.com');
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
