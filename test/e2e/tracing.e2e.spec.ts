import { randomBytes } from 'node:crypto';
import { InMemorySpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { EventStore, RecordedEvent } from '@chronicle/event-store';
import { startTracing, Tracing } from '@chronicle/tracing';
import { basic, E2E_BACKEND, startTestApp, TestAccount, TestApp } from './support/test-app';

// Spans are collected in this process: on the doubles the sagas run in a projector process,
// which would export elsewhere. The HTTP edge and the write path are the same on both.
const describeEmbedded = E2E_BACKEND === 'embedded' ? describe : describe.skip;

describeEmbedded('tracing (OpenTelemetry), with an in-memory exporter', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let subject: TestApp;
  let member: TestAccount;

  beforeAll(async () => {
    tracing = startTracing('chronicle-test', {}, exporter)!;
    subject = await startTestApp();
    member = await subject.createAccount();
  });

  afterAll(async () => {
    await subject.destroy();
    await tracing.shutdown();
  });

  const hex = (bytes: number) => randomBytes(bytes).toString('hex');
  const spansOf = (traceId: string) =>
    exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
  const byName = (spans: ReadableSpan[], name: string | RegExp) => {
    const found = spans.filter((span) =>
      typeof name === 'string' ? span.name === name : name.test(span.name),
    );
    expect(found.map((span) => span.name)).toHaveLength(1);
    return found[0];
  };
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

  it("continues the caller's traceparent from the PATCH to its event's metadata", async () => {
    const traceId = hex(16);
    const callerSpan = hex(8);
    const response = await fetch(`${subject.url}/users/${member.userId}`, {
      method: 'PATCH',
      headers: {
        authorization: basic(member),
        'content-type': 'application/merge-patch+json',
        traceparent: `00-${traceId}-${callerSpan}-01`,
      },
      body: JSON.stringify({ age: 51 }),
    });
    expect(response.status).toBe(200);

    const events = await subject.app.get(EventStore).readStream(`user-${member.userId}`);
    const patched = events.at(-1)!;
    expect(patched.type).toBe('UserPatched.v1');
    expect(patched.metadata.traceId).toBe(traceId);

    const spans = spansOf(traceId);
    const server = byName(spans, 'PATCH /users/:userId');
    expect(parentOf(server)).toBe(callerSpan);
    expect(server.attributes).toMatchObject({
      'http.route': '/users/:userId',
      'http.response.status_code': 200,
    });
    const command = byName(spans, 'command PatchUser');
    expect(parentOf(command)).toBe(server.spanContext().spanId);
    const append = byName(spans, 'event-store append');
    expect(parentOf(append)).toBe(command.spanContext().spanId);
    expect(append.attributes).toMatchObject({
      'chronicle.stream': `user-${member.userId}`,
      'chronicle.events': 1,
    });
    // The event names the span that wrote it.
    expect(patched.metadata.spanId).toBe(command.spanContext().spanId);

    // The projection runner applied it in a batch of its own trace.
    await subject.settle();
    expect(
      exporter
        .getFinishedSpans()
        .some(
          (span) => span.name === 'projection batch' && (span.attributes['chronicle.events'] as number) > 0,
        ),
    ).toBe(true);
  });

  it('follows a reset request through the saga to the e-mail it caused, in one trace', async () => {
    const traceId = hex(16);
    const response = await fetch(`${subject.url}/api/v1/account/password`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${hex(8)}-01` },
      body: JSON.stringify({ email: member.email }),
    });
    expect(response.status).toBe(202);
    const store = subject.app.get(EventStore);
    const deadline = Date.now() + 10_000;
    let sent: RecordedEvent | undefined;
    while (sent === undefined && Date.now() < deadline) {
      // Recorded in the request's own stream (passwordreset-<request id>).
      for await (const event of store.readAll({ eventTypes: ['PasswordResetEmailSent.v1'] })) {
        if (event.metadata.traceId === traceId) sent = event;
      }
      if (sent === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(sent?.metadata.traceId).toBe(traceId);
    const spans = spansOf(traceId);
    const step = byName(spans, 'saga saga:password');
    expect(step.attributes['chronicle.event.type']).toEqual(expect.stringMatching(/^PasswordResetRequested/));
    expect(spans.map((span) => span.name)).toEqual(expect.arrayContaining(['PUT /api/v1/account/password']));
  });

  it('is off, recording nothing in metadata, unless an endpoint (or exporter) is given', () => {
    expect(startTracing('chronicle-test', {})).toBeNull();
    expect(startTracing('chronicle-test', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBeNull();
  });
});
