import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { ExportPersonalDataHandler } from '../personal-data/export-personal-data/export-personal-data.handler';
import { Clock, SystemClock } from '../shared/clock';
import { GetUserAsOfHandler } from '../users/get-user-as-of/get-user-as-of.handler';
import { ListAuditEventsHandler } from './list-audit-events/list-audit-events.handler';
import { ErasureReceiptHandler, VerifyReceiptHandler } from './erasure-receipt/erasure-receipt.handler';
import { SealHistoryHandler } from './seal-history/seal-history.handler';
import { VerifyHistoryHandler } from './verify-history/verify-history.handler';

/**
 * The audit of the event history, users as they were, and exports of personal data; needs only
 * the EventStore port (and a clock of its own), so the CLI can host it too.
 */
@Module({
  imports: [CqrsModule],
  providers: [
    { provide: Clock, useClass: SystemClock },
    ListAuditEventsHandler,
    VerifyHistoryHandler,
    SealHistoryHandler,
    ErasureReceiptHandler,
    VerifyReceiptHandler,
    GetUserAsOfHandler,
    ExportPersonalDataHandler,
  ],
})
export class AuditModule {}
