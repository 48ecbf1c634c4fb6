import { randomBytes } from 'node:crypto';
import { InMemorySpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { EventStore, RecordedEvent } from '@chronicle/event-store';
import { startTracing, Tracing } from '@chronicle/tracing';
import { OtlpReceiver, ReceivedSpan, startOtlpReceiver } from '../doubles/otlp-receiver';
import { basic, E2E_BACKEND, startTestApp, TestAccount, TestApp } from './support/test-app';

// Spans are collected in this process: on the doubles the sagas run in a projector process,
// which would export elsewhere (the embedded default's sagas worker is traced below, through a collector double). The HTTP edge and the write path are the same on both.
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

  it('is off, recording nothing in metadata, unless an endpoint (or exporter) is given', () => {
    expect(startTracing('chronicle-test', {})).toBeNull();
    expect(startTracing('chronicle-test', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBeNull();
  });
});

describeEmbedded('tracing across the API and its sagas worker', () => {
  // The sagas run in a worker thread, whose spans go to the collector named by the standard
  // variables (the worker's own exporter), while the API's go to this process's exporter.
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let collector: OtlpReceiver;
  let subject: TestApp;
  let member: TestAccount;
  const saved = { ...process.env };

  beforeAll(async () => {
    tracing = startTracing('chronicle-test', {}, exporter)!;
    collector = await startOtlpReceiver();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.endpoint;
    process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
    try {
      subject = await startTestApp();
    } finally {
      process.env = saved;
    }
    member = await subject.createAccount();
  });

  afterAll(async () => {
    await subject.destroy();
    await tracing.shutdown();
    await collector.stop();
  });

  it('follows a reset request through the saga to the e-mail it caused, in one trace', async () => {
    const traceId = randomBytes(16).toString('hex');
    const response = await fetch(`${subject.url}/api/v1/account/password`, {
      method: 'PUT',
      headers: {
        'content-type': 'application/json',
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
      body: JSON.stringify({ email: member.email }),
    });
    expect(response.status).toBe(202);
    expect(exporter.getFinishedSpans().map((span) => [span.spanContext().traceId, span.name])).toContainEqual(
      [traceId, 'PUT /api/v1/account/password'],
    );
    const store = subject.app.get(EventStore);
    const deadline = Date.now() + 15_000;
    let sent: RecordedEvent | undefined;
    let step: ReceivedSpan | undefined;
    while ((sent === undefined || step === undefined) && Date.now() < deadline) {
      // Recorded in the request's own stream (passwordreset-<request id>).
      for await (const event of store.readAll({ eventTypes: ['PasswordResetEmailSent.v1'] })) {
        if (event.metadata.traceId === traceId) sent = event;
      }
      step = collector.spans().find((span) => span.traceId === traceId && span.name === 'saga saga:password');
      if (sent === undefined || step === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(sent?.metadata.traceId).toBe(traceId);
    expect(step?.attributes['chronicle.event.type']).toEqual(
      expect.stringMatching(/^PasswordResetRequested/),
    );
    // The e-mail's event was written inside the saga's step.
    expect(collector.spans().find((span) => span.spanId === sent?.metadata.spanId)?.traceId).toBe(traceId);
  });
});
