import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { HealthCheck } from '@nestjs/terminus';
import { Public } from '@chronicle/auth';
import { EventStore, processorChecks, ProcessorHost, readinessMet } from '@chronicle/event-store';
import { checkHealth, HealthCheck as Check, HealthCheckResult } from '@chronicle/metrics';
import { ReadStore } from '@chronicle/read-models';
import { HistoryChainWatch } from '../audit/history-chain-watch.service';
import { ProblemDto } from '../http/openapi';
import { PROBLEM_CONTENT_TYPE } from '../http/problem-details';

class HealthDto {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';

  @ApiProperty({
    description: 'Each check that passed, by name.',
    additionalProperties: true,
    type: 'object',
  })
  info!: Record<string, unknown>;

  @ApiProperty({
    description: 'Each check that failed, by name (empty when healthy).',
    additionalProperties: true,
    type: 'object',
  })
  error!: Record<string, unknown>;

  @ApiProperty({ description: 'Every check, by name.', additionalProperties: true, type: 'object' })
  details!: Record<string, unknown>;
}

/** Public, documented here rather than by terminus (whose schemas are OpenAPI 3.0). */
const ApiHealth =
  (summary: string) => (target: object, key: string | symbol, descriptor: PropertyDescriptor) => {
    for (const decorator of [
      HealthCheck({ noCache: true, swaggerDocumentation: false }),
      ApiOperation({ summary, security: [] }),
      ApiOkResponse({ type: HealthDto, description: 'Healthy.' }),
      ApiResponse({
        status: 503,
        description: 'Not healthy: the problem says which check failed.',
        content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: getSchemaPath(ProblemDto) } } },
      }),
    ])
      decorator(target, key, descriptor);
  };

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly processors: ProcessorHost,
    private readonly chain: HistoryChainWatch,
  ) {}

  /** The process is up and serving. */
  @Get('live')
  @ApiHealth('Liveness: the process is up and serving')
  live(): Promise<HealthDto> {
    return answer({});
  }

  /**
   * Ready for traffic: the event store and the read store answer, what this process builds from
   * the history (the in-memory read models, the sessions) has caught up with it, and the history's
   * hash chain holds as far as it has been verified. Until then the answer is 503 and says how far
   * the catch-up is; a broken chain keeps it 503, naming the first broken position.
   */
  @Get('ready')
  @ApiHealth(
    'Readiness: the stores answer, the read models have caught up with the history, and its hash chain holds',
  )
  ready(): Promise<HealthDto> {
    return answer({
      eventStore: () => this.eventStore.ping(),
      readStore: () => this.readStore.ping(),
      historyChain: () => this.historyChain(),
      ...processorChecks(this.processors.registry, () => this.eventStore.headPosition()),
    });
  }

  /** Whether everything this process builds from the history has caught up with it (the lifecycle's "ready"). */
  hasCaughtUp(): boolean {
    return this.processors.registry.every(readinessMet);
  }

  /** Down while the tail since the kept verified head is checked, and for good once the chain breaks. */
  private historyChain(): HealthCheckResult {
    const { state, firstBroken, verifyingFrom } = this.chain.status();
    if (state === 'verified') return { status: 'up' };
    if (state === 'verifying') {
      return { status: 'down', message: 'verifying the hash chain of the history', from: verifyingFrom };
    }
    return {
      status: 'down',
      message: `the history's hash chain breaks at position ${firstBroken!.position}: it was edited outside the service`,
      firstBroken,
    };
  }
}

/**
 * The checks' report with the passed and the failed ones apart (`info`, `error`); not healthy, a
 * 503 whose problem details carry the checks.
 */
async function answer(checks: Record<string, Check>): Promise<HealthDto> {
  const { status, details } = await checkHealth(checks);
  const where = (up: boolean) =>
    Object.fromEntries(Object.entries(details).filter(([, result]) => (result.status === 'up') === up));
  const body = { status, info: where(true), error: where(false), details };
  if (status === 'error') throw new ServiceUnavailableException(body);
  return body as HealthDto;
}
