import { Command } from '@nestjs/cqrs';
import { ClientFields, User } from '@chronicle/domain';
import { Position } from '@chronicle/event-store';
import { CommandContext } from '../../shared/command-context';
import { Principal } from '../../shared/principal';

export interface PatchUserResult {
  user: User;
  /** The stream revision after the patch: the user's version (ETag). */
  revision: number;
  /** The members the patch named, with their stored values (the fragment representation). */
  patched: Partial<ClientFields>;
  /** Where the change landed; null when the patch changed nothing. */
  position: Position | null;
}

export class PatchUserCommand extends Command<PatchUserResult> {
  constructor(
    readonly userId: string,
    /** A merge patch body, already known to be a JSON object. */
    readonly patch: Record<string, unknown>,
    readonly principal: Principal,
    readonly context: CommandContext,
    /** The revisions If-Match accepts, when the client sent one (other than `*`). */
    readonly ifMatch?: readonly number[],
  ) {
    super();
  }
}
