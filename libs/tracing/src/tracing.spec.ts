import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import {
  activeTraceParent,
  startTracing,
  traced,
  traceProjectionBatch,
  traceSagaStep,
  tracingStarted,
} from './tracing';

describe('tracing', () => {
  it('is off without an OTLP endpoint: no provider, spans are no-ops, nothing for metadata', async () => {
    expect(startTracing('test', {})).toBeNull();
    expect(tracingStarted()).toBe(false);
    expect(await traced('work', () => Promise.resolve(activeTraceParent()))).toBeNull();
  });

  it('off, still gives the work a span to call and its failure as a rejection', async () => {
    expect(tracingStarted()).toBe(false);
    const span = await traced('work', (given) => Promise.resolve(given.setAttribute('a', 1).isRecording()));
    expect(span).toBe(false);
    const throwing = (): Promise<never> => {
      throw new Error('thrown before any promise');
    };
    await expect(traced('failing', throwing)).rejects.toThrow('thrown before any promise');
  });

  it('starts with OTEL_EXPORTER_OTLP_ENDPOINT (OTLP over HTTP) and stops', async () => {
    const tracing = startTracing('test', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
    expect(tracing).not.toBeNull();
    expect(tracingStarted()).toBe(true);
    await tracing!.shutdown();
    expect(tracingStarted()).toBe(false);
  });

  describe('with an exporter', () => {
    const exporter = new InMemorySpanExporter();
    let stop: () => Promise<void>;

    beforeAll(() => {
      stop = startTracing('test', {}, exporter)!.shutdown;
    });
    afterAll(() => stop());
    beforeEach(() => exporter.reset());

    it('nests spans, records errors, and gives the active span to metadata', async () => {
      const parent = await traced('outer', () =>
        traceProjectionBatch('read-models', 3, () => Promise.resolve(activeTraceParent())),
      );
      await expect(traced('failing', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
      const [batch, outer, failing] = exporter.getFinishedSpans();
      expect(batch.name).toBe('projection batch');
      expect(batch.attributes).toEqual({ 'chronicle.checkpoint': 'read-models', 'chronicle.events': 3 });
      expect(batch.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
      expect(parent).toEqual({ traceId: outer.spanContext().traceId, spanId: batch.spanContext().spanId });
      expect(failing.status).toEqual({ code: 2, message: 'boom' });
      expect(failing.events.map((event) => event.name)).toEqual(['exception']);
    });

    it("continues an event's recorded trace in a saga step", async () => {
      const recorded = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16) };
      await traceSagaStep('saga:password', { type: 'PasswordResetRequested.v1', metadata: recorded }, () =>
        Promise.resolve(),
      );
      await traceSagaStep('saga:password', { type: 'PasswordResetRequested.v1', metadata: {} }, () =>
        Promise.resolve(),
      );
      const [continued, fresh] = exporter.getFinishedSpans();
      expect(continued.spanContext().traceId).toBe(recorded.traceId);
      expect(continued.parentSpanContext?.spanId).toBe(recorded.spanId);
      expect(fresh.spanContext().traceId).not.toBe(recorded.traceId);
      expect(fresh.parentSpanContext).toBeUndefined();
    });
  });
});
