import { randomBytes, randomUUID } from 'node:crypto';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ChronicleConfig } from '@chronicle/config';
import {
  accountDecider,
  accountStreamName,
  checkEmail,
  checkPassword,
  FieldError,
  isFieldError,
  NewAccount,
  parseNewAccount,
  rolesOf,
  userDecider,
  userStreamName,
  ValidationError,
} from '@chronicle/domain';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { PasswordHasher } from '../../shared/security.ports';
import { AccountDirectory } from '../account-directory';
import { OpenAccountCommand, OpenAccountResult } from './open-account.command';

@CommandHandler(OpenAccountCommand)
export class OpenAccountHandler implements ICommandHandler<OpenAccountCommand, OpenAccountResult> {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly directory: AccountDirectory,
    private readonly hasher: PasswordHasher,
    private readonly config: ChronicleConfig,
  ) {}

  async execute(command: OpenAccountCommand): Promise<OpenAccountResult> {
    const invited = command.password === null;
    const { email, fields, roles } = this.parse(command);
    const accountId = randomUUID();
    const userId = randomUUID();
    // Invited: a password no one knows, so the account has none usable until its link is used.
    const password = invited ? randomBytes(32).toString('base64url') : (command.password as string);
    const passwordHash = await this.hasher.hash(password);
    // Address first: it is the only step that can be refused (409). A user without an account
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
    // The invitation is appended with the account, in one write: the saga mails it exactly once.
    await this.repository.handle(
      accountDecider,
      accountStreamName(accountId),
      (_state, now) => ({
        type: 'OpenAccount' as const,
        accountId,
        userId,
        email,
        roles: rolesOf(roles),
        passwordHash,
        ...(invited ? { invitationTtlSeconds: this.config.invitationTtlSeconds } : {}),
        now: now.toISOString(),
      }),
      command.context,
    );
    return { accountId, userId };
  }

  /** The account's values and its password's, every problem reported at once. */
  private parse(command: OpenAccountCommand): NewAccount {
    const errors: FieldError[] = [];
    let account: NewAccount | undefined;
    try {
      account = parseNewAccount(command.account);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      errors.push(...error.errors);
    }
    // The policy compares the password with the address: checked once there is an address.
    const email = checkEmail('email', command.account.email);
    if (command.password !== null && !isFieldError(email)) {
      const passwordError = checkPassword('password', command.password, email);
      if (passwordError) errors.push(passwordError);
    }
    if (account === undefined || errors.length > 0) throw new ValidationError(errors);
    return account;
  }
}
