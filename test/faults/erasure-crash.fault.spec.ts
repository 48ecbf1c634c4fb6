import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startSharedDoubles } from '../e2e/support/api-process';
import { runCliWithInput } from '../e2e/support/cli-process';
import { eventually } from '../e2e/support/eventually';
import { basic, newDataDir } from '../e2e/support/test-app';
import { startProjector } from '../support/app-process';
import { createFaultAdmin, FAULT_ADMIN, startApi, stopRunning } from './support/api-process';

/** Kills the API with SIGKILL once an erasure's SubjectErased.v1 is committed, before what follows it. */
const KILL_BEFORE_ERASURE_COMPLETED = join(__dirname, 'support', 'kill-before-erasure-completed.preload.ts');

const PERSON = { email: 'zyxwa.crash@erasure.example', password: 'a person-to-erase passphrase' };
const PERSON_NAME = 'Zyxwa Crash-Quokka';

/**
 * An erasure cut by a crash (issue 35): the API is killed with SIGKILL right after the erasure's
 * commit point, then started again. The erasure is then whole, never half: the key gone (the audit
 * reads null), the person out of the read models, their login and e-mails gone. On both shapes.
 */
describe.each(['embedded', 'doubles'] as const)('erasure through a crash (%s)', (shape) => {
  let dataDir: string;
  let env: Record<string, string>;
  let stopDoubles: (() => Promise<void>) | null;
  let userId: string;

  beforeEach(async () => {
    dataDir = newDataDir();
    env = { TOKEN_SECRET: randomBytes(32).toString('hex') };
    stopDoubles = null;
    if (shape === 'doubles') {
      const doubles = await startSharedDoubles(dataDir, 'erasure_crash');
      env = { ...doubles.env, ...env };
      stopDoubles = doubles.stop;
    }
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      await createFaultAdmin(dataDir);
      const person = await runCliWithInput(
        dataDir,
        PERSON.password,
        ...[
          'accounts',
          'create',
          '--email',
          PERSON.email,
          '--password-stdin',
          '--name',
          PERSON_NAME,
          '--age',
          '33',
        ],
      );
      if (person.code !== 0) throw new Error(`accounts create failed: ${person.stderr}`);
      ({ userId } = JSON.parse(person.stdout) as { userId: string });
    } finally {
      process.env = saved;
    }
  });

  afterEach(async () => {
    await stopRunning();
    await stopDoubles?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes an erasure cut short after its commit point when the service starts again', async () => {
    // On the production shape the sagas (the erasure's completion, the e-mails) and the read
    // models are the projector's: it runs throughout, as in a deployment.
    const projector = shape === 'doubles' ? startProjector({ DATA_DIR: dataDir, ...env }) : null;
    await projector?.waitForOutput(/Projector ready/);
    try {
      await erasedThroughACrash();
    } finally {
      await projector?.stop();
    }
  });

  async function erasedThroughACrash(): Promise<void> {
    const doomed = await startApi(dataDir, env, { preloads: [KILL_BEFORE_ERASURE_COMPLETED] });
    const me = await fetch(`${doomed.url}/api/v1/account/tokens`, {
      method: 'POST',
      headers: { authorization: basic(PERSON) },
    });
    expect(me.status).toBe(201);
    const token = ((await me.json()) as { access_token: string }).access_token;
    // A reset e-mail to the person, kept in the outbox (the embedded default's and the doubles').
    await fetch(`${doomed.url}/api/v1/account/password`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: PERSON.email }),
    });
    const outbox = join(dataDir, 'outbox');
    const keptFor = () => {
      try {
        return readdirSync(outbox).filter((name) =>
          readFileSync(join(outbox, name), 'utf8').includes(PERSON.email),
        );
      } catch {
        return [];
      }
    };
    await eventually('the reset e-mail is kept', () => keptFor().length > 0);

    // The process dies with the answer unsent, the erasure committed and nothing after it done.
    await expect(
      fetch(`${doomed.url}/users/${userId}`, {
        method: 'DELETE',
        headers: { authorization: basic(FAULT_ADMIN) },
      }),
    ).rejects.toThrow();
    expect(await doomed.process.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const restarted = await startApi(dataDir, env);
    const admin = { authorization: basic(FAULT_ADMIN) };
    expect((await fetch(`${restarted.url}/users/${userId}`, { headers: admin })).status).toBe(410);
    await eventually('the key is destroyed: the audit reads the values as erased', async () => {
      const records = (await (
        await fetch(`${restarted.url}/api/v1/audit/events?stream=user-${userId}`, { headers: admin })
      ).json()) as Array<{ erased?: true; data: { name?: unknown } }>;
      return records[0]?.erased === true && records[0].data.name === null;
    });
    await eventually('the token stops working', async () => {
      const response = await fetch(`${restarted.url}/users/${userId}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return response.status === 401;
    });
    expect(
      (await fetch(`${restarted.url}/users/${userId}`, { headers: { authorization: basic(PERSON) } })).status,
    ).toBe(401);
    expect(keptFor()).toEqual([]);
    await eventually('the read model leaves the person out', async () => {
      const listed = (await (
        await fetch(`${restarted.url}/users?maxpagesize=100`, { headers: admin })
      ).json()) as Array<{ id: string }>;
      return !listed.some((user) => user.id === userId);
    });
  }
});
