import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { AccountDirectory } from '../accounts/account-directory';
import { Clock, SystemClock } from './clock';
import { EventSourcedRepository } from './event-sourced-repository';

/**
 * What every command handler builds on: the clock, the event-sourced repository and the account
 * directory, one instance of each per app. Needs only the EventStore port from its host.
 */
@Module({
  imports: [CqrsModule],
  providers: [{ provide: Clock, useClass: SystemClock }, EventSourcedRepository, AccountDirectory],
  exports: [CqrsModule, Clock, EventSourcedRepository, AccountDirectory],
})
export class CommandCoreModule {}
