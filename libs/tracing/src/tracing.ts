import {
  type Attributes,
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * Only @opentelemetry/api is loaded by default: with no provider registered every span is a
 * no-op costing a function call. The SDK is loaded by startTracing, when tracing is on.
 */
const tracer = () => trace.getTracer('chronicle');

let started = false;

/** The span work gets when this process does not trace: every call on it does nothing. */
const NOT_RECORDED = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Whether this process traces: hooks that cost something per request are installed only then. */
export function tracingStarted(): boolean {
  return started;
}

export interface Tracing {
  /** Exports the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry tracing when OTEL_EXPORTER_OTLP_ENDPOINT (or the traces-only variant) is
 * set, or when a test passes its own exporter; else does nothing and returns null. The exporter
 * reads the standard OTEL_* variables (endpoint, headers, timeout); the service is named by
 * OTEL_SERVICE_NAME, else `service`. Incoming `traceparent` headers are honoured (W3C).
 */
export function startTracing(
  service: string,
  env: NodeJS.ProcessEnv = process.env,
  exporter?: SpanExporter,
): Tracing | null {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (exporter === undefined && (endpoint === undefined || endpoint.trim() === '')) return null;
  started = true;
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const { NodeTracerProvider } =
    require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor, SimpleSpanProcessor } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { resourceFromAttributes } =
    require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const otlp = () =>
    new (
      require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http')
    ).OTLPTraceExporter();
  /* eslint-enable @typescript-eslint/no-require-imports */
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? service }),
    // Batched to the collector; a test's exporter sees each span as it ends.
    spanProcessors: [
      exporter === undefined ? new BatchSpanProcessor(otlp()) : new SimpleSpanProcessor(exporter),
    ],
  });
  // Global: the AsyncLocalStorage context manager and the W3C trace-context propagator.
  provider.register();
  return {
    async shutdown() {
      started = false;
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/**
 * Runs `work` in a span of its own, a child of the active one: ended when `work` settles, its
 * error recorded. The one wrapper for every unit of work (commands, appends, projection batches,
 * saga steps); `parent` continues a trace recorded elsewhere (an event's metadata).
 */
export function traced<T>(
  name: string,
  work: (span: Span) => Promise<T>,
  options: { attributes?: Attributes; parent?: TraceParent | null; kind?: SpanKind } = {},
): Promise<T> {
  // Not tracing: no span, no context to enter (the API's no-op tracer would still make both on
  // every command, append and batch); a rejection, as from the span's callback, whatever `work` throws.
  if (!started) return (async () => work(NOT_RECORDED))();
  const parentContext =
    options.parent == null
      ? context.active()
      : trace.setSpanContext(ROOT_CONTEXT, {
          traceId: options.parent.traceId,
          spanId: options.parent.spanId,
          traceFlags: TraceFlags.SAMPLED,
          isRemote: true,
        });
  return tracer().startActiveSpan(
    name,
    { attributes: options.attributes, kind: options.kind ?? SpanKind.INTERNAL },
    parentContext,
    async (span) => {
      try {
        return await work(span);
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** A span that an event's metadata points to: where its trace goes on. */
export interface TraceParent {
  traceId: string;
  spanId: string;
}

/** The active span, when one is being recorded: what an event's metadata records. */
export function activeTraceParent(): TraceParent | null {
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return null;
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}

/**
 * A server span for an HTTP request, continuing the caller's `traceparent`: given to `started`,
 * then `run` is called in its context, so all the request's work is inside it.
 */
export function startServerSpan(
  method: string,
  headers: Record<string, string | string[] | undefined>,
  started: (span: Span) => void,
  run: () => void,
): void {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = tracer().startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
    parent,
  );
  started(span);
  context.with(trace.setSpan(parent, span), run);
}

export { SpanKind, type Span };

/**
 * The span of one projection batch. The runner calls this once per batch, so a rewrite of the
 * runner keeps its tracing by keeping this one call.
 */
export function traceProjectionBatch<T>(
  checkpoint: string,
  events: number,
  work: () => Promise<T>,
): Promise<T> {
  return traced('projection batch', work, {
    attributes: { 'chronicle.checkpoint': checkpoint, 'chronicle.events': events },
  });
}

/**
 * The span of one saga step: the command an event called for, in the trace of the request that
 * wrote the event (its metadata's trace), so the e-mail a request caused is in that request's trace.
 */
export function traceSagaStep<T>(
  saga: string,
  event: { type: string; metadata: { traceId?: string; spanId?: string } },
  work: () => Promise<T>,
): Promise<T> {
  const { traceId, spanId } = event.metadata;
  return traced(`saga ${saga}`, work, {
    attributes: { 'chronicle.saga': saga, 'chronicle.event.type': event.type },
    parent: traceId !== undefined && spanId !== undefined ? { traceId, spanId } : null,
  });
}

/** Names the active span once its work is known (a command's type is known after loading). */
export function nameActiveSpan(name: string): void {
  trace.getActiveSpan()?.updateName(name);
}
