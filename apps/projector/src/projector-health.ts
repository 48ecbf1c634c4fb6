import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { EventStore } from '@chronicle/event-store';
import { MetricsServer, OperatorResponse } from '@chronicle/metrics';
import { ReadStore } from '@chronicle/read-models';

type CheckResult = { status: 'up' } | { status: 'down'; message: string };

/**
 * The projector's /health/live and /health/ready, on its metrics listener (it has no public port):
 * live while the process runs, ready while the event store and the read store answer, with the
 * API's body shape (`status`, `details` by check).
 */
@Injectable()
export class ProjectorHealth implements OnModuleInit {
  constructor(
    @Inject(MetricsServer) private readonly server: MetricsServer,
    @Inject(EventStore) private readonly eventStore: EventStore,
    @Inject(ReadStore) private readonly readStore: ReadStore,
  ) {}

  onModuleInit(): void {
    this.server.route('/health/live', () => Promise.resolve(answer({})));
    this.server.route('/health/ready', async () => {
      const [eventStore, readStore] = await Promise.all([
        check(() => this.eventStore.ping()),
        check(() => this.readStore.ping()),
      ]);
      return answer({ eventStore, readStore });
    });
  }
}

async function check(ping: () => Promise<void>): Promise<CheckResult> {
  try {
    await ping();
    return { status: 'up' };
  } catch (error) {
    return { status: 'down', message: error instanceof Error ? error.message : 'unreachable' };
  }
}

function answer(details: Record<string, CheckResult>): OperatorResponse {
  const healthy = Object.values(details).every((result) => result.status === 'up');
  return {
    status: healthy ? 200 : 503,
    contentType: 'application/json',
    body: JSON.stringify({ status: healthy ? 'ok' : 'error', details }),
  };
}
