import { Module } from '@nestjs/common';
import { CommandCoreModule } from '../shared/command-core.module';
import { GetProjectionStatusHandler } from './get-projection-status/get-projection-status.handler';
import { ProjectionMetrics } from './projection-metrics';

/** Operations on the read models and sagas: their status, and its metrics; needs the EventStore and ReadStore ports. */
@Module({
  imports: [CommandCoreModule],
  providers: [GetProjectionStatusHandler, ProjectionMetrics],
})
export class ProjectionsAdminModule {}
