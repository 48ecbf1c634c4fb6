import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { EventStore, ProcessorCheck, processorChecks, ProcessorHost } from '@chronicle/event-store';
import { MetricsServer, OperatorResponse } from '@chronicle/metrics';
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
    this.server.route('/health/live', () => Promise.resolve(answer({})));
    this.server.route('/health/ready', async () => {
      const [eventStore, readStore, processors] = await Promise.all([
        check(() => this.eventStore.ping()),
        check(() => this.readStore.ping()),
        processorChecks(this.processors.registry, () => this.eventStore.headPosition()),
      ]);
      return answer({ eventStore, readStore, ...processors });
    });
  }
}

async function check(ping: () => Promise<void>): Promise<ProcessorCheck> {
  try {
    await ping();
    return { status: 'up' };
  } catch (error) {
    return { status: 'down', message: error instanceof Error ? error.message : 'unreachable' };
  }
}

function answer(details: Record<string, ProcessorCheck>): OperatorResponse {
  const healthy = Object.values(details).every((result) => result.status === 'up');
  return {
    status: healthy ? 200 : 503,
    contentType: 'application/json',
    body: JSON.stringify({ status: healthy ? 'ok' : 'error', details }),
  };
}
