import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { runCliProcess } from './support/cli-process';
import { backendEnv, basic, newDataDir } from './support/test-app';
import { freePort } from '../support/free-port';

const ROOT = join(__dirname, '..', '..');
const swcEnv = { SWC_NODE_PROJECT: join(ROOT, 'tsconfig.json') };

async function waitForHealth(url: string, server: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`server exited with ${server.exitCode}`);
    try {
      if ((await fetch(`${url}/health/live`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('server did not start');
}

describe('the server process', () => {
  it('logs structured JSON without any secret, and finishes in-flight requests on SIGTERM', async () => {
    const dataDir = newDataDir();
    const password = 'process-test-passphrase';
    const account = { email: 'process@example.com', password };
    const created = await runCliProcess(
      dataDir,
      ...[
        'accounts',
        'create',
        '--email',
        account.email,
        '--password',
        password,
        '--name',
        'P',
        '--age',
        '9',
      ],
    );
    expect(created.code).toBe(0);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const server = spawn(process.execPath, ['-r', '@swc-node/register', join(ROOT, 'apps/api/src/main.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...swcEnv,
        ...(await backendEnv(dataDir)),
        DATA_DIR: dataDir,
        PORT: String(port),
        LOG_LEVEL: 'trace',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let token = '';
    server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // Nest closes the app on SIGTERM, then re-raises the signal: the process ends by it, not by exit(0).
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      server.on('exit', (_code, signal) => resolve(signal)),
    );
    try {
      await waitForHealth(url, server);
      const issued = await fetch(`${url}/api/v1/account/tokens`, {
        method: 'POST',
        headers: { authorization: basic(account) },
      });
      token = ((await issued.json()) as { access_token: string }).access_token;
      expect((await fetch(`${url}/customers?access_token=${token}`)).status).toBe(200);
      // The parameter's name percent-encoded is the same parameter, and as secret in the log.
      expect((await fetch(`${url}/customers?access%5Ftoken=${token}`)).status).toBe(200);
      expect(
        (await fetch(`${url}/customers`, { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
      const changed = await fetch(`${url}/api/v1/account/password`, {
        method: 'PUT',
        headers: { authorization: basic(account), 'content-type': 'application/json' },
        body: JSON.stringify({ old: password, new: 'second-process-passphrase' }),
      });
      expect(changed.status).toBe(204);

      // A request still being served (Argon2id takes a while) when SIGTERM arrives is answered.
      const inFlight = fetch(`${url}/customers`, {
        headers: { authorization: basic({ email: account.email, password: 'second-process-passphrase' }) },
      });
      await new Promise((resolve) => setTimeout(resolve, 5));
      server.kill('SIGTERM');
      expect((await inFlight).status).toBe(200);
      // A ceiling well inside the 72 s keep-alive timeout that an idle client connection would hold.
      let ceiling: NodeJS.Timeout | undefined;
      const heldOpen = new Promise<'still running'>((resolve) => {
        ceiling = setTimeout(() => resolve('still running'), 20_000);
      });
      expect(await Promise.race([exited, heldOpen])).toBe('SIGTERM');
      clearTimeout(ceiling);
    } finally {
      if (server.exitCode === null) server.kill('SIGKILL');
    }

    const lines = output.split('\n').filter((line) => line.startsWith('{'));
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(output).toContain('request completed');
    for (const secret of [
      password,
      'second-process-passphrase',
      token,
      Buffer.from(`${account.email}:${password}`).toString('base64'),
    ]) {
      expect(output).not.toContain(secret);
    }
    expect(output.toLowerCase()).not.toContain('"authorization"');
    expect(output).toContain('access_token=[redacted]');
    expect(output).toContain('access%5Ftoken=[redacted]');
    expect(output).not.toMatch(/\$argon2id\$/);
  }, 60_000);
});
