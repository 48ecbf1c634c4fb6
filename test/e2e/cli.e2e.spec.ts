import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliCommand, jsonLines as json, runCliProcess as cli, runCliWithInput } from './support/cli-process';
import { basic, E2E_BACKEND, newDataDir, startTestApp } from './support/test-app';

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

  it('creates an auditor account that reads the audit and nothing else', async () => {
    const password = 'auditor password';
    const create = (...role: string[]) =>
      cli(
        dataDir,
        'accounts',
        'create',
        '--email',
        `auditor${role.length}@example.com`,
        '--password',
        password,
        '--name',
        'Audrey',
        '--age',
        '50',
        ...role,
      );
    const conflicting = await create('--admin', '--auditor');
    expect(conflicting.code).toBe(2);
    expect(conflicting.stderr).toContain('usage');
    const created = await create('--auditor');
    expect(created.code).toBe(0);
    const server = await startTestApp({ dataDir });
    try {
      const as = (path: string) =>
        fetch(`${server.url}${path}`, {
          headers: { authorization: basic({ email: 'auditor1@example.com', password }) },
        });
      expect((await as('/api/v1/audit/events?limit=1')).status).toBe(200);
      expect((await as('/customers')).status).toBe(403);
    } finally {
      await server.stop();
    }
  });

  it('prints a user as it was at a position or a time, built from the history', async () => {
    const server = await startTestApp({ dataDir });
    let userId: string;
    let history: Array<Record<string, any>>;
    try {
      const admin = await server.createAccount({ admin: true, name: 'Hopper', age: 40 });
      userId = admin.userId;
      const patched = await fetch(`${server.url}/users/${userId}`, {
        method: 'PATCH',
        headers: { authorization: basic(admin), 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ age: 41 }),
      });
      expect(patched.status).toBe(200);
      history = (await (
        await fetch(`${server.url}/api/v1/audit/events?stream=user-${userId}`, {
          headers: { authorization: basic(admin) },
        })
      ).json()) as Array<Record<string, any>>;
    } finally {
      await server.stop();
    }
    const then = await cli(dataDir, 'users', 'get', userId, '--as-of', history[0].position);
    expect(then.code).toBe(0);
    expect(json(then.stdout)).toEqual([expect.objectContaining({ id: userId, name: 'Hopper', age: 40 })]);
    const byTime = await cli(dataDir, 'users', 'get', userId, '--as-of', history[1].recordedAt);
    expect(json(byTime.stdout)).toEqual([expect.objectContaining({ age: 41 })]);
    const now = await cli(dataDir, 'users', 'get', userId);
    expect(json(now.stdout)).toEqual([expect.objectContaining({ age: 41 })]);
    const before = await cli(dataDir, 'users', 'get', userId, '--as-of', '2000-01-01T00:00:00Z');
    expect(before.code).toBe(1);
    expect(json(before.stderr)).toEqual([{ error: 'not-found', message: 'User not found' }]);
    const invalid = await cli(dataDir, 'users', 'get', userId, '--as-of', 'last week');
    expect(invalid.code).toBe(2);
  });

  it('refuses invalid customer values', async () => {
    const result = await cli(dataDir, 'customers', 'create', '--name', '', '--email', 'nope');
    expect(result.code).toBe(1);
    expect(json(result.stderr)[0].error).toBe('validation-error');
  });

  it('prints projections status: checkpoints, lag and head of each projection and saga', async () => {
    const statusData = newDataDir();
    const server = await startTestApp({ dataDir: statusData });
    try {
      await server.seedCustomers(20);
      const result = await cli(statusData, 'projections', 'status');
      expect(result.code).toBe(0);
      const [status, ...others] = json(result.stdout);
      expect(others).toEqual([]);
      expect(status.head).toEqual(expect.stringMatching(/^\d+(:\d+)?$/));
      const caughtUp = {
        checkpoint: status.head,
        lag: 0,
        lagExact: true,
        lagSeconds: 0,
      };
      expect(status.projections).toEqual([
        { name: 'customers', ...caughtUp },
        { name: 'users', ...caughtUp },
      ]);
      expect(status.sagas).toEqual([
        expect.objectContaining({ name: 'saga:password', lag: expect.any(Number), lagExact: true }),
      ]);
    } finally {
      await server.stop();
    }
    const stopped = await cli(statusData, 'projections', 'status');
    expect(stopped.code).toBe(0);
    const [after] = json(stopped.stdout);
    // The sagas' checkpoints and the parked messages are durable, whoever reads them.
    expect(after.sagas).toEqual([expect.objectContaining({ name: 'saga:password', lagExact: true })]);
    expect(after.parked).toEqual([]);
    // In-memory read models went with the server; MongoDB keeps them, and the status is read there.
    expect(after.projections.map((projection: { name: string }) => projection.name)).toEqual(
      E2E_BACKEND === 'embedded' ? [] : ['customers', 'users'],
    );
  });

  describe('on a terminal', () => {
    const terminalData = newDataDir();

    /**
     * Runs the CLI under script(1), so stderr is a terminal `columns` wide, with stdout sent to a
     * file as a pipe would take it (or left on the terminal). Returns what the terminal showed
     * and what the file got.
     */
    const onTerminal = async (args: string[], options: { columns?: number; stdoutToFile?: boolean } = {}) => {
      const { command, env } = await cliCommand(terminalData, args);
      const quote = (part: string) => `'${part.replace(/'/g, "'\\''")}'`;
      const file = join(terminalData, `stdout-${Date.now()}.txt`);
      const line =
        `stty cols ${options.columns ?? 200}; ${command.map(quote).join(' ')}` +
        (options.stdoutToFile === false ? '' : ` > ${quote(file)}`);
      const { code, terminal } = await new Promise<{ code: number | null; terminal: string }>(
        (resolve, reject) => {
          const child = spawn('script', ['-qec', line, '/dev/null'], { env });
          // Decoded whole: a chunk may end inside a character of the table's borders.
          const seen: Buffer[] = [];
          child.stdout.on('data', (chunk: Buffer) => seen.push(chunk));
          child.on('error', reject);
          child.on('close', (exitCode) =>
            resolve({ code: exitCode, terminal: Buffer.concat(seen).toString('utf8') }),
          );
        },
      );
      const stdout = options.stdoutToFile === false ? '' : readFileSync(file, 'utf8');
      return { code, terminal, stdout };
    };
    /** Frames of a progress bar, as the terminal redraws them. */
    const frames = (terminal: string) =>
      terminal
        .split(/\r|\n/)
        // eslint-disable-next-line no-control-regex
        .map((frame) => frame.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').trim())
        .filter((frame) => /\d+%/.test(frame));

    it('shows the progress of customers seed, ending at 100%, and keeps stdout to its JSON', async () => {
      // A chunk of the seed command (2,000) and a part: progress before the end.
      const seeded = await onTerminal(['customers', 'seed', '--count', '2500']);
      expect(seeded.code).toBe(0);
      expect(json(seeded.stdout)).toEqual([
        { created: 2500, firstId: 1, lastId: 2500, seconds: expect.any(Number) },
      ]);
      const shown = frames(seeded.terminal);
      expect(shown.length).toBeGreaterThanOrEqual(1);
      expect(shown.at(-1)).toMatch(/100% \| 2500 customers/);
    });

    it('ends the rebuild bar of a running server at 100%', async () => {
      const server = await startTestApp({ dataDir: terminalData });
      try {
        const rebuilt = await onTerminal(['projections', 'rebuild']);
        expect(rebuilt.code).toBe(0);
        const [result] = json(rebuilt.stdout);
        expect(result.events).toBeGreaterThanOrEqual(2500);
        expect(frames(rebuilt.terminal).at(-1)).toMatch(new RegExp(`100% \\| ${result.events} events`));
      } finally {
        await server.stop();
      }
      // A rebuild of the 2,500 customers seeded above, every personal value opened: on the doubles'
      // shape through the EventStoreDB and MongoDB doubles, past 30 s on two busy cores.
    }, 120_000);

    it('fits the audit table to the terminal width, or to COLUMNS when piped', async () => {
      const args = ['audit', '--format', 'table', '--limit', '20'];
      for (const columns of [80, 132]) {
        const shown = await onTerminal(args, { columns, stdoutToFile: false });
        expect(shown.code).toBe(0);
        const lines = shown.terminal.split(/\r?\n/).filter((line) => line.includes('│'));
        expect(lines.length).toBeGreaterThan(20);
        expect(lines.filter((line) => line.length > columns)).toEqual([]);
        expect(Math.max(...lines.map((line) => line.length))).toBeGreaterThan(columns - 10);
      }
      const { command, env } = await cliCommand(terminalData, args);
      const piped = await new Promise<string>((resolve, reject) => {
        const child = spawn(command[0], command.slice(1), { env: { ...env, COLUMNS: '70' } });
        const out: Buffer[] = [];
        child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
        child.on('error', reject);
        child.on('close', () => resolve(Buffer.concat(out).toString('utf8')));
      });
      const lines = piped.split('\n').filter((line) => line.includes('│'));
      expect(lines.length).toBeGreaterThan(20);
      expect(lines.filter((line) => line.length > 70)).toEqual([]);
    });
  });
});
