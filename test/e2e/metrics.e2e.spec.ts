import { randomUUID } from 'node:crypto';
import { EventStore } from '@chronicle/event-store';
import { freePort } from '../support/free-port';
import { clearOfLimitWindowEnd } from './support/limit-window';
import { scrape, valueOf } from './support/scrape';
import { basic, E2E_BACKEND, startTestApp, TestAccount, TestApp } from './support/test-app';

// The API's metrics; on the doubles the sagas (and their e-mails) run in the projector, whose
// metrics projector.e2e scrapes, so this file runs on the embedded default.
const describeEmbedded = E2E_BACKEND === 'embedded' ? describe : describe.skip;

describeEmbedded('GET /metrics on METRICS_PORT', () => {
  let subject: TestApp;
  let metricsPort: number;
  let member: TestAccount;

  beforeAll(async () => {
    metricsPort = await freePort();
    subject = await startTestApp({
      env: { METRICS_PORT: String(metricsPort), RESET_REQUESTS_PER_EMAIL: '1' },
    });
    member = await subject.createAccount();
  });

  afterAll(() => subject.destroy());

  it('is served on its own listener, never on the public port', async () => {
    expect((await fetch(`${subject.url}/metrics`)).status).toBe(404);
    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = await scrape(metricsPort);
    // prom-client's default process metrics.
    expect(valueOf(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
  });

  it('times each request by route template, method and status', async () => {
    const route = { route: '/users/:userId', method: 'PATCH', status: '200' };
    const before = await scrape(metricsPort);
    for (const age of [41, 42]) {
      const response = await fetch(`${subject.url}/users/${member.userId}`, {
        method: 'PATCH',
        headers: { authorization: basic(member), 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ age }),
      });
      expect(response.status).toBe(200);
    }
    expect((await fetch(`${subject.url}/no/such/${member.userId}`)).status).toBe(404);
    const after = await scrape(metricsPort);
    const count = (samples: typeof before, labels: Record<string, string>) =>
      valueOf(samples, 'http_server_request_duration_seconds_count', labels);
    expect(count(after, route) - count(before, route)).toBe(2);
    expect(valueOf(after, 'http_server_request_duration_seconds_sum', route)).toBeGreaterThan(0);
    // An unmatched path is one series, whatever the path: clients cannot grow the label set.
    const unmatched = { route: 'unmatched', method: 'GET', status: '404' };
    expect(count(after, unmatched) - count(before, unmatched)).toBe(1);
    expect(after.some((sample) => sample.labels.route?.includes(member.userId))).toBe(false);

    // Each PATCH appended one event, each in a commit of its own or grouped.
    const appends = (samples: typeof before) =>
      valueOf(samples, 'chronicle_event_store_append_duration_seconds_count', { outcome: 'ok' });
    expect(appends(after) - appends(before)).toBe(2);
    const committed = (samples: typeof before) =>
      valueOf(samples, 'chronicle_event_store_events_per_commit_sum');
    expect(committed(after) - committed(before)).toBe(2);
  });

  it('reports each projection and saga: its lag in events and seconds, and its position', async () => {
    const headNow = async () => Number((await subject.app.get(EventStore).headPosition())!.commit);
    await subject.settle();
    const before = await scrape(metricsPort);
    const labels = (name: string) => ({ kind: 'projection', name });
    for (const name of ['customers', 'users']) {
      expect(valueOf(before, 'chronicle_projection_position', labels(name))).toBe(await headNow());
      expect(valueOf(before, 'chronicle_projection_lag_events', labels(name))).toBe(0);
      expect(valueOf(before, 'chronicle_projection_lag_seconds', labels(name))).toBe(0);
    }
    // A projection batch later, the position has moved to the new head.
    await subject.seedCustomers(3);
    const after = await scrape(metricsPort);
    expect(valueOf(after, 'chronicle_projection_position', labels('customers'))).toBe(await headNow());
    expect(valueOf(after, 'chronicle_projection_position', labels('customers'))).toBeGreaterThan(
      valueOf(before, 'chronicle_projection_position', labels('customers')),
    );
    // The saga's position appears once it has saved a checkpoint; its lag is there from the start.
    const saga = after.filter((sample) => sample.labels.kind === 'saga').map((sample) => sample.name);
    expect(saga).toEqual(
      expect.arrayContaining(['chronicle_projection_lag_events', 'chronicle_projection_lag_seconds']),
    );
    expect(
      after.filter((sample) => sample.labels.kind === 'saga').every((s) => s.labels.name === 'saga:password'),
    ).toBe(true);
  });

  it('counts e-mails sent and requests refused by a rate limit', async () => {
    await clearOfLimitWindowEnd();
    const mails = { template: 'password-reset', outcome: 'sent' };
    const before = await scrape(metricsPort);
    const request = () =>
      fetch(`${subject.url}/api/v1/account/password`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: member.email }),
      });
    expect((await request()).status).toBe(202);
    expect((await request()).status).toBe(429);
    const deadline = Date.now() + 10_000;
    let after = await scrape(metricsPort);
    // The saga sends the e-mail after the request's event is appended.
    while (
      valueOf(after, 'chronicle_mails_total', mails) === valueOf(before, 'chronicle_mails_total', mails)
    ) {
      if (Date.now() > deadline) throw new Error('No e-mail was counted within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await scrape(metricsPort);
    }
    expect(
      valueOf(after, 'chronicle_mails_total', mails) - valueOf(before, 'chronicle_mails_total', mails),
    ).toBe(1);
    // The address's limit (RESET_REQUESTS_PER_EMAIL=1) refused the second request.
    const limited = { limit: 'reset-email' };
    expect(
      valueOf(after, 'chronicle_rate_limit_rejections_total', limited) -
        valueOf(before, 'chronicle_rate_limit_rejections_total', limited),
    ).toBe(1);
  });

  it('counts parked messages per processor, 0 for each that has none', async () => {
    const parked = (samples: Awaited<ReturnType<typeof scrape>>, processor: string) =>
      samples.find(
        (sample) => sample.name === 'chronicle_parked_messages' && sample.labels.processor === processor,
      )?.value;
    const before = await scrape(metricsPort);
    expect(parked(before, 'read-models')).toBe(0);
    expect(parked(before, 'saga:password')).toBe(0);
    // An event the read models cannot use (a type this build does not know) is parked by them.
    await subject.app.get(EventStore).append(
      `user-${member.userId}`,
      [
        {
          id: randomUUID(),
          type: 'UserPatched.v9',
          data: {},
          metadata: {
            actor: 'newer',
            correlationId: 'c',
            causationId: null,
            occurredAt: new Date().toISOString(),
          },
        },
      ],
      'any',
    );
    await subject.settle();
    const after = await scrape(metricsPort);
    expect(parked(after, 'read-models')).toBe(1);
    expect(parked(after, 'saga:password')).toBe(0);
  });
});
