import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { parseClientFields, User, userDecider, userStreamName } from '@chronicle/domain';
import { ForbiddenError } from '../../shared/application-errors';
import { EventSourcedRepository } from '../../shared/event-sourced-repository';
import { isAdmin } from '../../shared/principal';
import { PatchUserCommand, PatchUserResult } from './patch-user.command';

@CommandHandler(PatchUserCommand)
export class PatchUserHandler implements ICommandHandler<PatchUserCommand, PatchUserResult> {
  constructor(private readonly repository: EventSourcedRepository) {}

  async execute({ userId, patch, principal, context, ifMatch }: PatchUserCommand): Promise<PatchUserResult> {
    // Checked before anything is read, so a non-admin learns nothing about other users.
    if (!isAdmin(principal) && principal.userId !== userId) {
      throw new ForbiddenError('You may change only your own user');
    }
    // Parsed before the user is looked for: an invalid patch is refused the same for everyone.
    const patched = parseClientFields(patch, 'patch');
    const result = await this.repository.handle(
      userDecider,
      userStreamName(userId),
      (_state, now) => ({ type: 'PatchUser' as const, values: patched, now: now.toISOString() }),
      context,
      { ifMatch },
    );
    // The decider refused a user that does not exist (NotFoundError): a handled patch's state is a
    // user, and its stream has a revision.
    return { user: result.state as User, revision: result.revision!, patched, position: result.position };
  }
}
