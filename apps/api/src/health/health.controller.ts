import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorResult,
  HealthIndicatorService,
} from '@nestjs/terminus';
import { Public } from '@chronicle/auth';
import { EventStore } from '@chronicle/event-store';
import { ReadStore } from '@chronicle/read-models';

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
  ) {}

  /** The process is up and serving. */
  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /** Ready for traffic: the event store and the read store answer. */
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([
      () => this.ping('eventStore', () => this.eventStore.ping()),
      () => this.ping('readStore', () => this.readStore.ping()),
    ]);
  }

  private async ping(key: string, ping: () => Promise<void>): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check(key);
    try {
      await ping();
      return indicator.up();
    } catch (error) {
      return indicator.down({ message: error instanceof Error ? error.message : 'unreachable' });
    }
  }
}
