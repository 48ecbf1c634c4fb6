import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { parsePosition } from '@chronicle/event-store';
import { ChronicleMetrics } from '@chronicle/metrics';
import { READ_MODELS_CHECKPOINT } from '@chronicle/read-models';
import { GetProjectionStatusHandler } from './get-projection-status/get-projection-status.handler';
import { ProjectionsStatus } from './get-projection-status/get-projection-status.query';

/**
 * Per projection and saga: lag in events and seconds, and the position processed; per processor,
 * its parked messages. Read at scrape time from the status query, so the processors' loops carry
 * no instrumentation; one query serves the gauges of a scrape.
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
    new Gauge({
      name: 'chronicle_parked_messages',
      help: 'Messages a processor gave up on and set aside, by processor (0 for each one with none)',
      labelNames: ['processor'] as const,
      registers,
      collect: async function (this: Gauge<'processor'>) {
        this.reset();
        for (const [processor, count] of parkedByProcessor(await status())) this.set({ processor }, count);
      },
    });
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

/** Parked messages per processor; each processor this process knows of is there, with 0 if need be. */
function parkedByProcessor(status: ProjectionsStatus): Map<string, number> {
  const counts = new Map<string, number>();
  if (status.projections.length > 0) counts.set(READ_MODELS_CHECKPOINT, 0);
  for (const saga of status.sagas) counts.set(saga.name, 0);
  for (const message of status.parked)
    counts.set(message.processor, (counts.get(message.processor) ?? 0) + 1);
  return counts;
}
