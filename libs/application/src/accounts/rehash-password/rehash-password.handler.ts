import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { accountDecider, accountStreamName } from '@chronicle/domain';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { PasswordHasher } from '../../shared/security.ports';
import { RehashPasswordCommand } from './rehash-password.command';

@CommandHandler(RehashPasswordCommand)
export class RehashPasswordHandler implements ICommandHandler<RehashPasswordCommand, void> {
  constructor(
    private readonly repository: EventSourcedRepository,
    private readonly hasher: PasswordHasher,
  ) {}

  async execute({
    accountId,
    password,
    verifiedPasswordHash,
    context,
  }: RehashPasswordCommand): Promise<void> {
    const passwordHash = await this.hasher.hash(password);
    await this.repository.handle(
      accountDecider,
      accountStreamName(accountId),
      (_state, now) => ({
        type: 'RehashPassword' as const,
        passwordHash,
        verifiedPasswordHash,
        now: now.toISOString(),
      }),
      context,
    );
  }
}
