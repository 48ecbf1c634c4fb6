import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { EventStore, processorChecks, ProcessorHost } from '@chronicle/event-store';
import { checkHealth, HealthReport, MetricsServer, OperatorResponse } from '@chronicle/metrics';
import { ReadStore } from '@chronicle/read-models';

/**
 * The projector's /health/live and /health/ready, on its metrics listener (it has no public port):
 * live while the process runs, ready while the event store and the read store answer and no
 * processor of its host's registry has stopped for good, with the API's body shape (`status`,
 * `details` by check). Catching up is its work, not a reason to be unready: no request reads it.
 */
@Injectable()
export class ProjectorHealth implements OnModuleInit {
  constructor(
    @Inject(MetricsServer) private readonly server: MetricsServer,
    @Inject(EventStore) private readonly eventStore: EventStore,
    @Inject(ReadStore) private readonly readStore: ReadStore,
    @Inject(ProcessorHost) private readonly processors: ProcessorHost,
  ) {}

  onModuleInit(): void {
    this.server.route('/health/live', async () => answer(await checkHealth({})));
    this.server.route('/health/ready', async () =>
      answer(
        await checkHealth({
          eventStore: () => this.eventStore.ping(),
          readStore: () => this.readStore.ping(),
          ...processorChecks(this.processors.registry, () => this.eventStore.headPosition()),
        }),
      ),
    );
  }
}

function answer(report: HealthReport): OperatorResponse {
  return {
    status: report.status === 'ok' ? 200 : 503,
    contentType: 'application/json',
    body: JSON.stringify(report),
  };
}
