import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client';

/** The metrics of another thread of this process, as prom-client's JSON. */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

/** Where more of this process's metrics come from: a worker thread asked for its own. */
export type MetricsSource = () => Promise<MetricsSnapshot>;

/** Buckets for request and append durations, in seconds: 1 ms to 10 s. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The process's Prometheus instruments, on a registry of its own (never prom-client's global one),
 * so two apps in one test process never share or clash over a metric. One per process, made
 * where the process starts (createApp, the projector's main) and served by MetricsServer.
 */
export class ChronicleMetrics {
  readonly registry = new Registry();

  readonly httpRequestDuration = new Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'Time from a request arriving to its response being sent, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly appendDuration = new Histogram({
    name: 'chronicle_event_store_append_duration_seconds',
    help: 'Time from an append being asked for to its outcome, by outcome (ok, error)',
    labelNames: ['outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly eventsPerCommit = new Histogram({
    name: 'chronicle_event_store_events_per_commit',
    help: 'Events written by each event-store transaction (the embedded store groups concurrent appends)',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
    registers: [this.registry],
  });

  readonly mails = new Counter({
    name: 'chronicle_mails_total',
    help: 'E-mails handed to the mail transport, by template and outcome (sent, failed)',
    labelNames: ['template', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly rateLimitRejections = new Counter({
    name: 'chronicle_rate_limit_rejections_total',
    help: 'Requests refused with 429, by limit',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  /** What the event store reports of its appends (its EventStoreObserver). */
  readonly eventStore = {
    appended: (seconds: number, ok: boolean) =>
      this.appendDuration.observe({ outcome: ok ? 'ok' : 'error' }, seconds),
    committed: (events: number) => this.eventsPerCommit.observe(events),
  };

  private readonly sources = new Set<MetricsSource>();

  /** With `processMetrics`, prom-client's default process metrics (CPU, memory, event loop, GC) too. */
  constructor(options: { processMetrics: boolean } = { processMetrics: false }) {
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** Adds a worker thread's metrics to this process's exposition, until the returned function is called. */
  addSource(source: MetricsSource): () => void {
    this.sources.add(source);
    return () => this.sources.delete(source);
  }

  /**
   * The Prometheus text of this registry with every source's metrics added in: a series both
   * report is summed (a worker's e-mails count with the process's), as prom-client's cluster
   * aggregation does. A series only this registry has is kept as it is, whatever its aggregator.
   */
  async exposition(): Promise<string> {
    if (this.sources.size === 0) return this.registry.metrics();
    const [own, ...others] = await Promise.all([
      this.registry.getMetricsAsJSON() as Promise<MetricsSnapshot>,
      ...[...this.sources].map((source) => source()),
    ]);
    const shared = new Set(others.flat().map((metric) => metric.name));
    // One value per series here: 'first' keeps it (a process metric's own 'omit' would drop it).
    const kept = own.map((metric) =>
      shared.has(metric.name) ? metric : { ...metric, aggregator: 'first' as const },
    );
    return AggregatorRegistry.aggregate([kept, ...others]).metrics();
  }
}
