import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommandBus } from '@nestjs/cqrs';
import type { Worker } from 'node:worker_threads';
import { Mailer } from '@chronicle/mail';
import { SagaWorkerHost } from '../../apps/api/src/sagas/saga-worker.host';
import { startTestApp, TestApp } from './support/test-app';

// API.md: nothing a client can time tells a known address from an unknown one. The 202 is the
// same for both; the e-mail work that follows for a known address (the account read, the token's
// events, the message) must not run on the API's event loop, where it would slow the requests
// that follow. On the embedded default it runs in the sagas' worker thread, on the production
// shape in the projector. (bench/benchmarks/reset-timing.bench.ts measures what a client sees.)
const requestReset = (url: string, email: string) =>
  fetch(`${url}/api/v1/account/password`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email }),
  });

/** Resolves once DATA_DIR/outbox holds an e-mail to `email`: a generous ceiling, not an expected time. */
async function mailedTo(subject: TestApp, email: string): Promise<void> {
  const outbox = join(subject.dataDir, 'outbox');
  const mailed = () =>
    existsSync(outbox) &&
    readdirSync(outbox).some(
      (name) => name.endsWith('.eml') && readFileSync(join(outbox, name), 'utf8').includes(`To: ${email}`),
    );
  const deadline = Date.now() + 15_000;
  while (!mailed()) {
    if (Date.now() > deadline) throw new Error(`No e-mail to ${email} within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('reset requests: the e-mail work never runs on the API event loop', () => {
  let subject: TestApp;

  beforeAll(async () => {
    subject = await startTestApp();
  });
  afterAll(() => subject.destroy());

  it('sends the e-mail of a known address without a command or a send in the API thread', async () => {
    const account = await subject.createAccount();
    const commands = jest.spyOn(subject.app.get(CommandBus), 'execute');
    const send = jest.spyOn(subject.app.get(Mailer), 'send');
    try {
      const response = await fetch(`${subject.url}/api/v1/account/password`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: account.email }),
      });
      expect(response.status).toBe(202);

      const outbox = join(subject.dataDir, 'outbox');
      const mailed = () =>
        existsSync(outbox) &&
        readdirSync(outbox).some(
          (name) =>
            name.endsWith('.eml') &&
            readFileSync(join(outbox, name), 'utf8').includes(`To: ${account.email}`),
        );
      const deadline = Date.now() + 15_000;
      while (!mailed()) {
        if (Date.now() > deadline) throw new Error('No e-mail within 15 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }

      // The request itself ran here; nothing of the saga did.
      expect(commands.mock.calls.map(([command]) => command.constructor.name)).toEqual([
        'RequestPasswordResetCommand',
      ]);
      expect(send).not.toHaveBeenCalled();
    } finally {
      commands.mockRestore();
      send.mockRestore();
    }
  });

  it('starts the sagas worker again when it stops on its own, and the e-mails go on', async () => {
    const host = subject.app.get(SagaWorkerHost);
    const worker = Reflect.get(host, 'worker') as Worker;
    await worker.terminate();
    const account = await subject.createAccount();
    expect((await requestReset(subject.url, account.email)).status).toBe(202);
    await mailedTo(subject, account.email);
    expect(Reflect.get(host, 'worker')).not.toBe(worker);
  });
});
