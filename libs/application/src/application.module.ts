import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { AttemptLimits } from './shared/attempt-limits';
import { ChangePasswordHandler } from './accounts/change-password/change-password.handler';
import { RehashPasswordHandler } from './accounts/rehash-password/rehash-password.handler';
import { CompletePasswordResetHandler } from './accounts/complete-password-reset/complete-password-reset.handler';
import { RequestPasswordResetHandler } from './accounts/request-password-reset/request-password-reset.handler';
import { IssueAccessTokenHandler } from './accounts/issue-access-token/issue-access-token.handler';
import { OpenAccountHandler } from './accounts/open-account/open-account.handler';
import { EndSessionHandler } from './accounts/end-session/end-session.handler';
import { ChangeCustomerHandler } from './customers/change-customer/change-customer.handler';
import { GetCustomerHandler } from './customers/get-customer/get-customer.handler';
import { ListCustomersHandler } from './customers/list-customers/list-customers.handler';
import { CustomerNumberAllocator } from './customers/customer-number-allocator';
import { RegisterCustomerHandler } from './customers/register-customer/register-customer.handler';
import { SeedCustomersHandler } from './customers/seed-customers/seed-customers.handler';
import { EraseSubjectHandler } from './personal-data/erase-subject/erase-subject.handler';
import { ReapplyErasuresHandler } from './personal-data/reapply-erasures/reapply-erasures.handler';
import { ErasureCompletion } from './personal-data/complete-erasure/erasure-completion';
import { CommandCoreModule } from './shared/command-core.module';
import { SecurityEvents } from './security/security-events';
import { GetUserHandler } from './users/get-user/get-user.handler';
import { ListUsersHandler } from './users/list-users/list-users.handler';
import { PatchUserHandler } from './users/patch-user/patch-user.handler';

/**
 * The commands clients send, and their handlers (the sagas' own commands are SagaCommandsModule's).
 * Needs from its host the EventStore, PasswordHasher, AccessTokenCodec and AttemptCounters ports
 * (the adapters are chosen by the app).
 */
@Module({
  imports: [CommandCoreModule],
  providers: [
    AttemptLimits,
    CustomerNumberAllocator,
    OpenAccountHandler,
    IssueAccessTokenHandler,
    EndSessionHandler,
    RequestPasswordResetHandler,
    CompletePasswordResetHandler,
    ChangePasswordHandler,
    RehashPasswordHandler,
    RegisterCustomerHandler,
    ChangeCustomerHandler,
    // Folded from the stream by the repository, not read from the read models.
    GetCustomerHandler,
    SeedCustomersHandler,
    PatchUserHandler,
    ErasureCompletion,
    EraseSubjectHandler,
    ReapplyErasuresHandler,
    SecurityEvents,
  ],
  exports: [CommandCoreModule, AttemptLimits, SecurityEvents],
})
export class ApplicationModule {}

/** Queries answered from the read models; needs the ReadStore port (and EventStore, to catch up). */
@Module({
  imports: [CqrsModule],
  providers: [ListCustomersHandler, ListUsersHandler, GetUserHandler],
})
export class QueriesModule {}
