import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliCommand, jsonLines as json, runCliProcess as cli, runCliWithInput } from './support/cli-process';
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

  describe('the password of a new account', () => {
    const create = (email: string, ...how: string[]) =>
      ['accounts', 'create', '--email', email, ...how, '--name', 'Pw', '--age', '30'] as const;

    it('is read from standard input with --password-stdin, never from the command line', async () => {
      const password = 'from: standard input';
      const result = await runCliWithInput(
        dataDir,
        `${password}\n`,
        ...create('stdin@example.com', '--password-stdin'),
      );
      expect(result.code).toBe(0);
      const server = await startTestApp({ dataDir });
      try {
        const login = (secret: string) =>
          fetch(`${server.url}/customers`, {
            headers: { authorization: basic({ email: 'stdin@example.com', password: secret }) },
          });
        expect((await login(password)).status).toBe(200);
        expect((await login(`${password}\n`)).status).toBe(401);
      } finally {
        await server.stop();
      }
    });

    it('is asked for on a terminal, without echo', async () => {
      const password = 'typed at the prompt';
      const { command, env } = await cliCommand(dataDir, [...create('tty@example.com')]);
      // script(1) gives the CLI a terminal; what it is sent stands for the keys typed.
      const quoted = command.map((part) => `'${part.replace(/'/g, "'\\''")}'`).join(' ');
      const output = await new Promise<string>((resolve, reject) => {
        const child = spawn('script', ['-qec', quoted, '/dev/null'], { env });
        let seen = '';
        child.stdout.on('data', (chunk: Buffer) => {
          seen += chunk.toString();
          // Typed once the prompt is there, as a person would.
          if (seen.includes('Password:') && child.stdin.writable) child.stdin.end(`${password}\r`);
        });
        child.on('error', reject);
        child.on('close', () => resolve(seen));
      });
      expect(output).toContain('Password:');
      expect(output).not.toContain(password);
      expect(output).toMatch(/"accountId":"[0-9a-f-]{36}"/);
    });

    it('is a usage error when not given and no terminal can ask', async () => {
      const result = await runCliWithInput(dataDir, null, ...create('none@example.com'));
      expect(result.code).toBe(2);
      expect(json(result.stderr)).toEqual([
        { error: 'usage', message: expect.stringContaining('--password-stdin') },
      ]);
    });

    it('is a usage error when given two ways', async () => {
      const result = await runCliWithInput(
        dataDir,
        'x\n',
        ...create('both@example.com', '--password-stdin', '--password', 'also this'),
      );
      expect(result.code).toBe(2);
    });
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

  it('answers usage errors with exit code 2 and a JSON error on stderr', async () => {
    for (const args of [
      ['customers', 'seed', '--count', 'many'],
      ['accounts', 'create', '--email', 'x@example.com'],
      ['nonsense'],
    ]) {
      const result = await cli(dataDir, ...args);
      expect(result.code).toBe(2);
      expect(json(result.stderr)).toEqual([{ error: 'usage', message: expect.any(String) }]);
    }
  });

  it('prints its version as JSON', async () => {
    const result = await cli(dataDir, '--version');
    expect(result.code).toBe(0);
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(json(result.stdout)).toEqual([{ version }]);
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
