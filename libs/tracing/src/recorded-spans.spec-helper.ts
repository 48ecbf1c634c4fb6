import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { startTracing, Tracing } from './tracing';

/**
 * Traces the enclosing describe block's tests into memory: tracing starts before them and stops
 * after them, and the spans are forgotten before each. Call it in the describe's body; the spans
 * a test ended are the exporter's getFinishedSpans().
 */
export function recordSpans(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;

  beforeAll(() => {
    tracing = startTracing('test', {}, exporter)!;
  });
  afterAll(() => tracing.shutdown());
  beforeEach(() => exporter.reset());
  return exporter;
}
