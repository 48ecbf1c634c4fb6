import { randomUUID } from 'node:crypto';
import { EventStore } from '@chronicle/event-store';
import { basic, startTestApp, TestAccount, TestApp } from './support/test-app';

/**
 * An event of a type or version this build does not know (issue 22), as after a rollback from a
 * newer build: written here with the store's own append, on whichever store the suite runs.
 */
describe('a stored event of a type this build does not know', () => {
  let subject: TestApp;
  let admin: TestAccount;
  let owner: TestAccount;
  let other: TestAccount;
  const foreignType = 'UserPatched.v9';
  let foreignId: string;

  const patch = (account: TestAccount, body: unknown) =>
    fetch(`${subject.url}/users/${account.userId}`, {
      method: 'PATCH',
      headers: { authorization: basic(account), 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    subject = await startTestApp();
    [admin, owner, other] = await Promise.all([
      subject.createAccount({ admin: true, name: 'Admin' }),
      subject.createAccount({ name: 'Owner', age: 30 }),
      subject.createAccount({ name: 'Other', age: 40 }),
    ]);
    foreignId = randomUUID();
    await subject.app.get(EventStore).append(
      `user-${owner.userId}`,
      [
        {
          id: foreignId,
          type: foreignType,
          data: { userId: owner.userId, changes: { age: 31 }, pinHash: 'secret-looking', modifiedon: 'x' },
          metadata: {
            actor: 'newer-build',
            correlationId: randomUUID(),
            causationId: null,
            occurredAt: new Date().toISOString(),
          },
        },
      ],
      'any',
    );
  });
  afterAll(() => subject.destroy());

  it('makes a write to its stream a 503 naming the cause, never a 500', async () => {
    const response = await patch(owner, { age: 32 });
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await response.json()).toEqual({
      type: 'unknown-event-type',
      title: 'Service Unavailable',
      status: 503,
      detail: expect.stringContaining(foreignType),
    });
  });

  it('is parked by the read models, counted and listed with its reason, and the others go on', async () => {
    expect((await patch(other, { age: 41 })).status).toBe(200);
    await subject.settle();
    const deadline = Date.now() + 15_000;
    let parked: Array<Record<string, unknown>> = [];
    while (parked.length === 0 && Date.now() < deadline) {
      const status = await fetch(`${subject.url}/api/v1/admin/projections`, {
        headers: { authorization: basic(admin) },
      });
      expect(status.status).toBe(200);
      parked = ((await status.json()) as { parked: Array<Record<string, unknown>> }).parked;
      if (parked.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(parked).toEqual([
      expect.objectContaining({
        processor: 'read-models',
        eventId: foreignId,
        stream: `user-${owner.userId}`,
        type: foreignType,
        reason: expect.stringContaining(`${foreignType} is not an event type this build knows`),
      }),
    ]);
    const users = await fetch(`${subject.url}/users/${other.userId}`, {
      headers: { authorization: basic(other) },
    });
    expect(await users.json()).toEqual(expect.objectContaining({ age: 41 }));
  });

  it('shows in the audit as stored, its type and version and member names, with no value of it', async () => {
    const response = await fetch(`${subject.url}/api/v1/audit/events?stream=user-${owner.userId}`, {
      headers: { authorization: basic(admin) },
    });
    expect(response.status).toBe(200);
    const records = (await response.json()) as Array<Record<string, any>>;
    expect(records.at(-1)).toEqual(
      expect.objectContaining({
        type: foreignType,
        actor: 'newer-build',
        revision: 1,
        data: {
          userId: '[redacted]',
          changes: '[redacted]',
          pinHash: '[redacted]',
          modifiedon: '[redacted]',
        },
      }),
    );
  });
});
