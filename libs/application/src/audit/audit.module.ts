import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { GetUserAsOfHandler } from '../users/get-user-as-of/get-user-as-of.handler';
import { ListAuditEventsHandler } from './list-audit-events/list-audit-events.handler';

/**
 * The audit of the event history, and users as they were; needs only the EventStore port, so the
 * CLI can host it too.
 */
@Module({
  imports: [CqrsModule],
  providers: [ListAuditEventsHandler, GetUserAsOfHandler],
})
export class AuditModule {}
