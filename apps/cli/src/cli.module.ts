import { DynamicModule, Module } from '@nestjs/common';
import { ApplicationModule, SagaCommandsModule } from '@chronicle/application';
import { SecurityModule } from '@chronicle/auth';
import { ChronicleConfig, ChronicleConfigModule } from '@chronicle/config';
import { EventStoreModule } from '@chronicle/event-store';
import { MailModule } from '@chronicle/mail';

/** What the CLI's commands need: the write side only, on the same configuration as the server. */
@Module({})
export class CliModule {
  static forRoot(config: ChronicleConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ChronicleConfigModule.forRoot(config),
        SecurityModule,
        { module: MailModule, global: true },
        EventStoreModule.forRoot(),
        ApplicationModule,
        // `projections parked retry` runs a saga's command here.
        SagaCommandsModule,
      ],
    };
  }
}
