import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { AccountDirectory } from './accounts/account-directory';
import { IssueAccessTokenHandler } from './accounts/issue-access-token/issue-access-token.handler';
import { OpenAccountHandler } from './accounts/open-account/open-account.handler';
import { RevokeAccessTokenHandler } from './accounts/revoke-access-token/revoke-access-token.handler';
import { ListCustomersHandler } from './customers/list-customers/list-customers.handler';
import { CustomerNumberAllocator } from './customers/customer-number-allocator';
import { RegisterCustomerHandler } from './customers/register-customer/register-customer.handler';
import { SeedCustomersHandler } from './customers/seed-customers/seed-customers.handler';
import { Clock, SystemClock } from './shared/clock';
import { EventSourcedRepository } from './shared/event-sourced-repository';
import { PatchUserHandler } from './users/patch-user/patch-user.handler';

/**
 * Commands and their handlers. Needs from its host the EventStore, PasswordHasher and
 * AccessTokenCodec ports (the adapters are chosen by the app).
 */
@Module({
  imports: [CqrsModule],
  providers: [
    { provide: Clock, useClass: SystemClock },
    EventSourcedRepository,
    AccountDirectory,
    CustomerNumberAllocator,
    OpenAccountHandler,
    IssueAccessTokenHandler,
    RevokeAccessTokenHandler,
    RegisterCustomerHandler,
    SeedCustomersHandler,
    PatchUserHandler,
  ],
  exports: [CqrsModule, Clock, EventSourcedRepository, AccountDirectory],
})
export class ApplicationModule {}

/** Queries answered from the read models; needs the ReadStore port. */
@Module({
  imports: [CqrsModule],
  providers: [ListCustomersHandler],
})
export class QueriesModule {}
