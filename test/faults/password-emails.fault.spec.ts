import { rmSync } from 'node:fs';
import { runCliWithInput } from '../e2e/support/cli-process';
import { newDataDir } from '../e2e/support/test-app';
import {
  linkTokenIn as tokenIn,
  recipientOf as to,
  SmtpCatcher,
  startSmtpCatcher,
} from '../support/smtp-catcher';
import { kill9, running, startApi } from './support/api-process';

/**
 * Password e-mails under faults (issue 21): the API as a child process on the embedded default,
 * killed with SIGKILL at chosen points and started again on the same DATA_DIR.
 */

const PASSWORD = 'fault-test-passphrase';

async function createAccount(dataDir: string, email: string): Promise<void> {
  const created = await runCliWithInput(
    dataDir,
    PASSWORD,
    ...['accounts', 'create', '--email', email, '--password-stdin', '--name', 'F', '--age', '30'],
  );
  if (created.code !== 0) throw new Error(`accounts create failed: ${created.stderr}`);
}

function putPassword(url: string, body: unknown): Promise<Response> {
  return fetch(`${url}/api/v1/account/password`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('password e-mails under faults', () => {
  let dataDir: string;
  let catcher: SmtpCatcher;

  beforeEach(async () => {
    dataDir = newDataDir();
    catcher = await startSmtpCatcher();
  });

  afterEach(async () => {
    await Promise.all([...running].map((child) => child.stop().catch(() => undefined)));
    running.clear();
    await catcher.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sends nothing after a restart for requests made before the address had an account', async () => {
    const first = await startApi(dataDir, { SMTP_URL: `${catcher.url}?pool=false` });
    for (let i = 0; i < 10; i++) {
      expect((await putPassword(first.url, { email: 'late@example.com' })).status).toBe(202);
    }
    await createAccount(dataDir, 'late@example.com');
    await kill9(first);

    const second = await startApi(dataDir, { SMTP_URL: `${catcher.url}?pool=false` });
    // The saga handles requests in order: once a later one is mailed, the earlier ones were handled.
    await createAccount(dataDir, 'known@example.com');
    expect((await putPassword(second.url, { email: 'known@example.com' })).status).toBe(202);
    await catcher.waitFor((mail) => to(mail) === 'known@example.com', 15_000);

    expect(catcher.messages.map(to)).toEqual(['known@example.com']);
  });

  it('killed while the mail server holds its reply, sends the same token under the same Message-ID after a restart', async () => {
    await createAccount(dataDir, 'ada@example.com');
    catcher.holdReplies();
    const first = await startApi(dataDir, { SMTP_URL: `${catcher.url}?pool=false` });
    expect((await putPassword(first.url, { email: 'ada@example.com' })).status).toBe(202);
    // The message is at the server; its 250 never reaches the sender, which dies waiting for it.
    const firstSend = await catcher.waitFor((mail) => to(mail) === 'ada@example.com', 15_000);
    await kill9(first);
    await catcher.stop();
    catcher = await startSmtpCatcher();

    const second = await startApi(dataDir, { SMTP_URL: `${catcher.url}?pool=false` });
    const resent = await catcher.waitFor((mail) => to(mail) === 'ada@example.com', 15_000);

    expect(resent.messageId).toBe(firstSend.messageId);
    expect(tokenIn(resent)).toBe(tokenIn(firstSend));
    // One token, valid once.
    expect((await putPassword(second.url, { token: tokenIn(resent), new: 'a new passphrase' })).status).toBe(
      204,
    );
    expect(
      (await putPassword(second.url, { token: tokenIn(firstSend), new: 'another passphrase' })).status,
    ).toBe(400);
  });

  it('parks the reset of a bouncing mailbox with its reason; the other e-mails go out, and it stays parked after a restart', async () => {
    await createAccount(dataDir, 'bounce@example.com');
    await createAccount(dataDir, 'fine@example.com');
    catcher.rejectRecipient('bounce@example.com');
    const first = await startApi(dataDir, { SMTP_URL: `${catcher.url}?pool=false` });
    expect((await putPassword(first.url, { email: 'bounce@example.com' })).status).toBe(202);
    expect((await putPassword(first.url, { email: 'fine@example.com' })).status).toBe(202);
    const started = Date.now();
    await catcher.waitFor((mail) => to(mail) === 'fine@example.com', 15_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    // Stopped, not killed: a kill between a send and its record would send it again (same token and id).
    await first.process.stop();
    running.delete(first.process);

    const second = await startApi(dataDir, { SMTP_URL: `${catcher.url}?pool=false` });
    await createAccount(dataDir, 'later@example.com');
    expect((await putPassword(second.url, { email: 'later@example.com' })).status).toBe(202);
    await catcher.waitFor((mail) => to(mail) === 'later@example.com', 15_000);
    await second.process.stop();
    running.delete(second.process);

    const status = await runCliWithInput(dataDir, null, 'projections', 'status');
    expect(status.code).toBe(0);
    const { parked, sagas } = JSON.parse(status.stdout) as {
      parked: Array<Record<string, unknown>>;
      sagas: Array<Record<string, unknown>>;
    };
    expect(parked).toEqual([
      expect.objectContaining({
        processor: 'saga:password',
        type: 'PasswordResetRequested.v2',
        attempts: 1,
        reason: expect.stringMatching(/refused the message: .*550/),
      }),
    ]);
    expect(sagas).toEqual([expect.objectContaining({ name: 'saga:password', lag: 0 })]);
    expect(catcher.messages.map(to)).toEqual(['fine@example.com', 'later@example.com']);

    // The mailbox is fixed: an operator retries the parked message, and it goes out once.
    catcher.rejectRecipient('bounce@example.com', false);
    const smtpUrl = process.env.SMTP_URL;
    process.env.SMTP_URL = `${catcher.url}?pool=false`;
    try {
      const retried = await runCliWithInput(
        dataDir,
        null,
        'projections',
        'parked',
        'retry',
        'saga:password',
        String(parked[0].eventId),
      );
      expect(retried).toMatchObject({ code: 0, stdout: '{"retried":true}\n' });
    } finally {
      if (smtpUrl === undefined) delete process.env.SMTP_URL;
      else process.env.SMTP_URL = smtpUrl;
    }
    const after = JSON.parse((await runCliWithInput(dataDir, null, 'projections', 'status')).stdout) as {
      parked: unknown[];
    };
    expect(after.parked).toEqual([]);
    expect(catcher.messages.map(to)).toEqual(['fine@example.com', 'later@example.com', 'bounce@example.com']);
  });
});
