import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../shared/command-context';
import { Principal } from '../../shared/principal';

export interface IssuedAccessToken {
  accessToken: string;
  expiresIn: number;
}

export class IssueAccessTokenCommand extends Command<IssuedAccessToken> {
  constructor(
    readonly principal: Principal,
    readonly ttlSeconds: number,
    readonly context: CommandContext,
  ) {
    super();
  }
}
