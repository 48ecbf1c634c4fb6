import { DynamicModule, Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { AuditModule } from '@chronicle/application';
import { ChronicleConfig, ChronicleConfigModule } from '@chronicle/config';
import { EventStoreModule } from '@chronicle/event-store';

/** What reading the history needs (`audit`, `users get`): the event store only, never the read models. */
@Module({})
export class HistoryCliModule {
  static forRoot(config: ChronicleConfig): DynamicModule {
    return {
      module: HistoryCliModule,
      imports: [ChronicleConfigModule.forRoot(config), CqrsModule, EventStoreModule.forRoot(), AuditModule],
    };
  }
}
