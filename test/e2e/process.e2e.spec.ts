import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startApi, stopRunning } from '../support/app-process';
import { builtCommand } from '../support/built';
import { runCliProcess } from './support/cli-process';
import { scrape, valueOf } from './support/scrape';
import { backendEnv, basic, newDataDir } from './support/test-app';
import { freePort } from '../support/free-port';

const ROOT = join(__dirname, '..', '..');

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
    const metricsPort = await freePort();
    const server = await startApi(dataDir, {
      ...(await backendEnv(dataDir)),
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'trace',
    });
    const { url } = server;
    const port = new URL(url).port;
    let token = '';
    try {
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
      // The three GET /customers above, counted on the metrics listener by their route template.
      expect(
        valueOf(await scrape(metricsPort), 'http_server_request_duration_seconds_count', {
          route: '/customers',
          method: 'GET',
          status: '200',
        }),
      ).toBe(3);

      // A request still being served (Argon2id takes a while) when SIGTERM arrives is answered.
      const inFlight = fetch(`${url}/customers`, {
        headers: { authorization: basic({ email: account.email, password: 'second-process-passphrase' }) },
      });
      await new Promise((resolve) => setTimeout(resolve, 5));
      // Nest closes the app on SIGTERM, then re-raises the signal: the process ends by it, not by
      // exit(0); within a ceiling well inside the 72 s keep-alive an idle client connection would hold.
      const stopped = server.process.stop(20_000);
      expect((await inFlight).status).toBe(200);
      expect((await stopped).signal).toBe('SIGTERM');
    } finally {
      await stopRunning();
    }
    const output = server.process.output();
    // The whole log, not the tail a long one would be cut to: every line is checked for secrets.
    expect(output.length).toBeLessThan(256 * 1024);

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

    // Request lines say who asked what and how it went; the client is the socket's peer here
    // (TRUST_PROXY unset), the account the one the credentials proved.
    const logged = lines.map((line) => JSON.parse(line) as Record<string, any>);
    const bearer = logged.find(
      (line) =>
        line.msg === 'request completed' && line.req.route === '/customers' && line.res.statusCode === 200,
    );
    expect(bearer).toMatchObject({
      req: { method: 'GET', route: '/customers', client: '127.0.0.1', userAgent: expect.any(String) },
      accountId: created.stdout.match(/"accountId":"([^"]+)"/)![1],
      responseTime: expect.any(Number),
    });
    // The lifecycle, in order.
    const lifecycle = logged
      .map((line) => line.msg as string)
      .filter((msg) => ['listening', 'ready', 'stopped'].includes(msg) || msg.startsWith('draining'));
    expect(lifecycle).toEqual(['listening', 'ready', expect.stringMatching(/^draining/), 'stopped']);
    expect(logged.find((line) => line.msg === 'listening')).toMatchObject({ address: `0.0.0.0:${port}` });
    // Mail lines (libs/mail/src/mail-report.spec.ts) never carry the address in full.
    expect(output).not.toContain('"to":"process@example.com"');
  }, 60_000);

  it('writes readable lines, not JSON, on a terminal', async () => {
    const dataDir = newDataDir();
    const env = {
      ...process.env,
      ...(await backendEnv(dataDir)),
      DATA_DIR: dataDir,
      // The server picks its port and logs it: no port another process may take meanwhile.
      PORT: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    };
    // script(1) gives the server a terminal; the shell says which pid to stop.
    const line = `${[process.execPath, ...builtCommand('api')].join(' ')} & echo "PID=$!"; wait`;
    const terminal = spawn('script', ['-qec', line, '/dev/null'], { cwd: ROOT, env });
    let output = '';
    terminal.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const closed = new Promise<void>((resolve) => terminal.on('close', () => resolve()));
    try {
      // eslint-disable-next-line no-control-regex
      const plainOutput = () => output.replace(/\u001b\[[0-9;]*m/g, '');
      let port: string | undefined;
      for (const deadline = Date.now() + 60_000; port === undefined && Date.now() < deadline;) {
        if (terminal.exitCode !== null) break;
        port = /address: "[^"]*:(\d+)"/.exec(plainOutput())?.[1];
        if (port === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (port === undefined) {
        throw new Error(
          `The server did not log where it listens; the end of its output:\n${plainOutput().slice(-3000)}`,
        );
      }
      expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);
      process.kill(Number(/PID=(\d+)/.exec(output)![1]), 'SIGTERM');
      await closed;
    } finally {
      if (terminal.exitCode === null) terminal.kill('SIGKILL');
    }
    // eslint-disable-next-line no-control-regex
    const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
    expect(plain).toMatch(/INFO.*: listening/);
    expect(plain).toMatch(/INFO.*: request completed/);
    expect(plain).toMatch(/INFO.*: stopped/);
    expect(plain.split(/\r?\n/).filter((text) => text.startsWith('{'))).toEqual([]);
  }, 60_000);
});
