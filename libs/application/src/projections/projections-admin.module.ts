import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { GetProjectionStatusHandler } from './get-projection-status/get-projection-status.handler';

/** Operations on the read models; needs the EventStore and ReadStore ports. */
@Module({
  imports: [CqrsModule],
  providers: [GetProjectionStatusHandler],
})
export class ProjectionsAdminModule {}
