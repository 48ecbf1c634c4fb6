import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { runCliWithInput } from '../e2e/support/cli-process';
import { basic, issueToken, newDataDir } from '../e2e/support/test-app';
import { kill9, startApi, stopRunning } from './support/api-process';

/**
 * The sessions (issue 21) are stored with their checkpoint in events.db, so a start replays only
 * the events after it. A SIGKILL must not let a revocation come back to life on the next start.
 */
const account = { email: 'kept@example.com', password: 'a long enough passphrase' };
const changed = { ...account, password: 'another long passphrase' };

const withToken = (url: string, token: string) =>
  fetch(`${url}/customers`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

describe('the sessions across a SIGKILL and a restart', () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = newDataDir();
  });
  afterEach(async () => {
    await stopRunning();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('read back from their stored state, keep every revocation made before the kill', async () => {
    const created = await runCliWithInput(
      dataDir,
      account.password,
      ...['accounts', 'create', '--email', account.email, '--password-stdin', '--name', 'K', '--age', '30'],
    );
    expect(created.code).toBe(0);
    const api = await startApi(dataDir);
    const beforeChange = await issueToken(api.url, account);
    const ended = await issueToken(api.url, account);
    const end = await fetch(`${api.url}/api/v1/account/tokens/current`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ended}` },
    });
    expect(end.status).toBe(204);
    const change = await fetch(`${api.url}/api/v1/account/password`, {
      method: 'PUT',
      headers: { authorization: basic(account), 'content-type': 'application/json' },
      body: JSON.stringify({ old: account.password, new: changed.password }),
    });
    expect(change.status).toBe(204);
    const afterChange = await issueToken(api.url, changed);

    // Killed once the sessions have stored the change and the end (and before, too, is fine:
    // the replay from the stored checkpoint brings them; waiting makes the stored state matter).
    const db = new Database(join(dataDir, 'events.db'), { readonly: true });
    try {
      const stored = db.prepare<[], { value: string }>(
        "SELECT value FROM processor_state WHERE processor = 'account-sessions'",
      );
      for (const deadline = Date.now() + 20_000; ;) {
        const entries = stored
          .all()
          .map((row) => JSON.parse(row.value) as { credentialsVersion: number; endedSessions: unknown[] });
        if (entries.some((entry) => entry.credentialsVersion === 1 && entry.endedSessions.length === 1))
          break;
        if (Date.now() > deadline)
          throw new Error(`the sessions never stored the change: ${JSON.stringify(entries)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      db.close();
    }
    await kill9(api);

    const restarted = await startApi(dataDir);
    await restarted.process.waitForOutput(
      /EventProcessor\(account-sessions\).*Caught up|Caught up.*account-sessions/,
    );

    expect(await withToken(restarted.url, beforeChange)).toBe(401);
    expect(await withToken(restarted.url, ended)).toBe(401);
    expect(await withToken(restarted.url, afterChange)).toBe(200);
  });
});
