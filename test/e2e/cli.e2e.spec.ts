import { jsonLines as json, runCliProcess as cli } from './support/cli-process';
import { basic, newDataDir, startTestApp } from './support/test-app';

describe('chronicle CLI', () => {
  const dataDir = newDataDir();

  it('creates an account and prints its ids as JSON', async () => {
    const result = await cli(
      dataDir,
      'accounts',
      'create',
      '--email',
      'ops@example.com',
      '--password',
      'a long password',
      '--name',
      'Ops',
      '--age',
      '33',
      '--admin',
    );
    expect(result.code).toBe(0);
    expect(json(result.stdout)).toEqual([
      {
        accountId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        userId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      },
    ]);
  });

  it('refuses a second account with the same address, in any case', async () => {
    const result = await cli(
      dataDir,
      'accounts',
      'create',
      '--email',
      'OPS@example.com',
      '--password',
      'another password',
      '--name',
      'Ops',
      '--age',
      '33',
    );
    expect(result.code).toBe(1);
    expect(json(result.stderr)[0]).toMatchObject({ error: 'email-taken' });
  });

  it('reports invalid values with the fields named', async () => {
    const result = await cli(
      dataDir,
      'accounts',
      'create',
      '--email',
      'not-an-address',
      '--password',
      'short',
      '--name',
      ' ',
      '--age',
      '200',
    );
    expect(result.code).toBe(1);
    const [report] = json(result.stderr);
    expect(report.error).toBe('validation-error');
    expect((report.errors as { field: string }[]).map((error) => error.field).sort()).toEqual([
      'age',
      'email',
      'name',
    ]);
  });

  it('refuses a password that breaks the policy', async () => {
    const result = await cli(
      dataDir,
      'accounts',
      'create',
      '--email',
      'p@example.com',
      '--password',
      'short',
      '--name',
      'P',
      '--age',
      '3',
    );
    expect(result.code).toBe(1);
    expect(json(result.stderr)[0].errors).toEqual([{ field: 'password', message: expect.any(String) }]);
  });

  it('answers usage errors with a non-zero code', async () => {
    expect((await cli(dataDir, 'customers', 'seed', '--count', 'many')).code).not.toBe(0);
    expect((await cli(dataDir, 'accounts', 'create', '--email', 'x@example.com')).code).not.toBe(0);
    expect((await cli(dataDir, 'nonsense')).code).not.toBe(0);
  });

  it('creates and seeds customers whose writes reach a running server within a second', async () => {
    const server = await startTestApp({ dataDir });
    try {
      const admin = { email: 'ops@example.com', password: 'a long password' };
      const created = await cli(
        dataDir,
        'customers',
        'create',
        '--name',
        'Ada Lovelace',
        '--email',
        'ada@example.com',
      );
      expect(created.code).toBe(0);
      expect(json(created.stdout)).toEqual([{ id: 1 }]);
      const seeded = await cli(dataDir, 'customers', 'seed', '--count', '500');
      expect(seeded.code).toBe(0);
      expect(json(seeded.stdout)[0]).toMatchObject({ created: 500, firstId: 2, lastId: 501 });

      // The server learns of another process's appends by polling (how soon is the event store
      // contract's to test, with a fake poll timer): here they must arrive, within a generous ceiling.
      const totalCount = async () =>
        (await fetch(`${server.url}/customers`, { headers: { authorization: basic(admin) } })).headers.get(
          'x-total-count',
        );
      const deadline = Date.now() + 15_000;
      while ((await totalCount()) !== '501' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const all = await fetch(`${server.url}/customers?maxpagesize=1000`, {
        headers: { authorization: basic(admin) },
      });
      expect(all.headers.get('x-total-count')).toBe('501');
      expect(((await all.json()) as { name: string }[])[0].name).toBe('Ada Lovelace');
    } finally {
      await server.stop();
    }
  });

  it('refuses invalid customer values', async () => {
    const result = await cli(dataDir, 'customers', 'create', '--name', '', '--email', 'nope');
    expect(result.code).toBe(1);
    expect(json(result.stderr)[0].error).toBe('validation-error');
  });
});
