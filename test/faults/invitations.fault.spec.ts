import { rmSync } from 'node:fs';
import { basic, newDataDir } from '../e2e/support/test-app';
import {
  linkTokenIn as tokenIn,
  recipientOf as to,
  SmtpCatcher,
  startSmtpCatcher,
} from '../support/smtp-catcher';
import { createFaultAdmin, FAULT_ADMIN, kill9, running, startApi, stopRunning } from './support/api-process';

/**
 * Invitations under faults: the API as a child process on the embedded default, killed with
 * SIGKILL while the invitation e-mail is at the mail server, and started again on the same DATA_DIR.
 */

describe('invitations under faults', () => {
  let dataDir: string;
  let catcher: SmtpCatcher;

  beforeEach(async () => {
    dataDir = newDataDir();
    catcher = await startSmtpCatcher();
    await createFaultAdmin(dataDir);
  });

  afterEach(async () => {
    await stopRunning();
    await catcher.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('killed while the mail server holds its reply, sends one invitation with one valid token after a restart', async () => {
    catcher.holdReplies();
    const first = await startApi(dataDir, { SMTP_URL: `${catcher.url}?pool=false` });
    const invited = await fetch(`${first.url}/api/v1/accounts`, {
      method: 'POST',
      headers: { authorization: basic(FAULT_ADMIN), 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'grace@example.com', name: 'Grace', age: 45 }),
    });
    expect(invited.status).toBe(201);
    // The message is at the server; its 250 never reaches the sender, which dies waiting for it.
    const firstSend = await catcher.waitFor((mail) => to(mail) === 'grace@example.com', 15_000);
    await kill9(first);
    await catcher.stop();
    catcher = await startSmtpCatcher();

    const second = await startApi(dataDir, { SMTP_URL: `${catcher.url}?pool=false` });
    const resent = await catcher.waitFor((mail) => to(mail) === 'grace@example.com', 15_000);
    // One e-mail as the recipient sees it (same Message-ID), one token.
    expect(resent.messageId).toBe(firstSend.messageId);
    expect(tokenIn(resent)).toBe(tokenIn(firstSend));
    const complete = (password: string) =>
      fetch(`${second.url}/api/v1/account/password`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: tokenIn(resent), new: password }),
      });
    expect((await complete('grace first passphrase')).status).toBe(204);
    expect((await complete('grace other passphrase')).status).toBe(400);
    // Nothing more is sent once it is recorded: a graceful restart sends no third copy.
    await second.process.stop();
    running.delete(second.process);
    const third = await startApi(dataDir, { SMTP_URL: `${catcher.url}?pool=false` });
    const login = await fetch(`${third.url}/api/v1/account/tokens`, {
      method: 'POST',
      headers: { authorization: basic({ email: 'grace@example.com', password: 'grace first passphrase' }) },
    });
    expect(login.status).toBe(201);
    const invitations = catcher.messages.filter((mail) => /Your Chronicle account/.test(mail.subject ?? ''));
    expect(invitations).toHaveLength(1);
  });
});
