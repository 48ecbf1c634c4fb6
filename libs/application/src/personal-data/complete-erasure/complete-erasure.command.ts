import { Command } from '@nestjs/cqrs';
import { RecordedEvent } from '@chronicle/event-store';

/** The saga's step after a SubjectErased.v1: what the erasure itself may not have finished. */
export class CompleteErasureCommand extends Command<void> {
  constructor(readonly erasure: RecordedEvent) {
    super();
  }
}
