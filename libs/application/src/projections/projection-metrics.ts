import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { parsePosition } from '@chronicle/event-store';
import { ChronicleMetrics } from '@chronicle/metrics';
import { GetProjectionStatusHandler } from './get-projection-status/get-projection-status.handler';
import { ProjectionsStatus } from './get-projection-status/get-projection-status.query';

/**
 * Per projection and saga: lag in events and seconds, and the position processed. Read at scrape
 * time from the status query, so the runners' loops carry no instrumentation; one query serves
 * the three gauges of a scrape.
 */
@Injectable()
export class ProjectionMetrics implements OnModuleInit {
  private pending: Promise<ProjectionsStatus> | null = null;

  constructor(
    private readonly status: GetProjectionStatusHandler,
    @Optional() @Inject(ChronicleMetrics) private readonly metrics?: ChronicleMetrics,
  ) {}

  onModuleInit(): void {
    if (this.metrics === undefined) return;
    const registers = [this.metrics.registry];
    const labelNames = ['kind', 'name'] as const;
    const gauge = (name: string, help: string, value: (entry: Entry) => number | null) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        collect: async function (this: Gauge<'kind' | 'name'>) {
          this.reset();
          for (const entry of entries(await status())) {
            const figure = value(entry);
            if (figure !== null) this.set({ kind: entry.kind, name: entry.name }, figure);
          }
        },
      });
    const status = () => this.scrapeStatus();
    gauge('chronicle_projection_lag_events', 'Events in the store not yet processed (capped)', (e) => e.lag);
    gauge(
      'chronicle_projection_lag_seconds',
      'How long the oldest unprocessed event has waited; 0 when caught up',
      (e) => e.lagSeconds,
    );
    gauge(
      'chronicle_projection_position',
      'Commit position of the last event processed (absent before the first)',
      (e) => (e.checkpoint === null ? null : Number(parsePosition(e.checkpoint)?.commit ?? NaN)),
    );
  }

  private scrapeStatus(): Promise<ProjectionsStatus> {
    this.pending ??= this.status.execute().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }
}

type Entry = ProjectionsStatus['projections'][number] & { kind: 'projection' | 'saga' };

function entries(status: ProjectionsStatus): Entry[] {
  return [
    ...status.projections.map((entry) => ({ ...entry, kind: 'projection' as const })),
    ...status.sagas.map((entry) => ({ ...entry, kind: 'saga' as const })),
  ];
}
