import { randomUUID } from 'node:crypto';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  accountDecider,
  accountStreamName,
  checkEmail,
  checkPassword,
  ClientFields,
  FieldError,
  isFieldError,
  parseClientFields,
  Role,
  userDecider,
  userStreamName,
  ValidationError,
} from '@chronicle/domain';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { PasswordHasher } from '../../shared/security.ports';
import { AccountDirectory } from '../account-directory';
import { AccountKind, OpenAccountCommand, OpenAccountResult } from './open-account.command';

const ROLES_OF: Record<AccountKind, Role[]> = {
  user: ['user'],
  admin: ['user', 'admin'],
  auditor: ['auditor'],
};

@CommandHandler(OpenAccountCommand)
export class OpenAccountHandler implements ICommandHandler<OpenAccountCommand, OpenAccountResult> {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly directory: AccountDirectory,
    private readonly hasher: PasswordHasher,
  ) {}

  async execute(command: OpenAccountCommand): Promise<OpenAccountResult> {
    const email = checkEmail('email', command.email);
    const errors: FieldError[] = isFieldError(email) ? [email] : [];
    let fields: ClientFields | undefined;
    try {
      fields = parseClientFields({ name: command.name, age: command.age }, 'all');
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      errors.push(...error.errors);
    }
    const passwordError = isFieldError(email) ? null : checkPassword('password', command.password, email);
    if (passwordError) errors.push(passwordError);
    if (isFieldError(email) || fields === undefined || errors.length > 0) throw new ValidationError(errors);

    const roles: Role[] = ROLES_OF[command.kind];
    const accountId = randomUUID();
    const userId = randomUUID();
    const passwordHash = await this.hasher.hash(command.password as string);
    // Address first: it is the only step that can be refused. A user without an account
    // (the process died in between) is harmless; an account without its user is not.
    await this.directory.reserveEmail(email, accountId, command.context);
    await this.repository.handle(
      userDecider,
      userStreamName(userId),
      (_state, now) => ({
        type: 'RegisterUser' as const,
        userId,
        accountId,
        fields,
        now: now.toISOString(),
      }),
      command.context,
    );
    await this.repository.handle(
      accountDecider,
      accountStreamName(accountId),
      (_state, now) => ({
        type: 'OpenAccount' as const,
        accountId,
        userId,
        email,
        roles,
        passwordHash,
        now: now.toISOString(),
      }),
      command.context,
    );
    return { accountId, userId };
  }
}
