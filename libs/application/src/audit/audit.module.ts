import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { GetUserAsOfHandler } from '../users/get-user-as-of/get-user-as-of.handler';
import { ListAuditEventsHandler } from './list-audit-events/list-audit-events.handler';
import { SealHistoryHandler } from './seal-history/seal-history.handler';
import { VerifyHistoryHandler } from './verify-history/verify-history.handler';

/**
 * The audit of the event history, and users as they were; needs only the EventStore port, so the
 * CLI can host it too.
 */
@Module({
  imports: [CqrsModule],
  providers: [ListAuditEventsHandler, VerifyHistoryHandler, SealHistoryHandler, GetUserAsOfHandler],
})
export class AuditModule {}
