import { QueryBus } from '@nestjs/cqrs';
import { Command, InvalidArgumentError } from 'commander';
import { AsOf, GetUserAsOfQuery, parseAsOf } from '@chronicle/application';
import { ChronicleConfig } from '@chronicle/config';
import { userRepresentation } from '@chronicle/domain';
import { printJson } from '../output';
import { recordHistoryRead, withHistory } from './history-cli.module';

function asOfOption(value: string): AsOf {
  const asOf = parseAsOf(value);
  if (asOf === null) {
    throw new InvalidArgumentError(
      'must be an RFC 3339 time such as 2026-11-22T09:15:00Z, or a position such as 42',
    );
  }
  return asOf;
}

export function registerUsersCommands(program: Command, config: () => ChronicleConfig): void {
  const users = program.command('users').description('Users, read from the history');
  users
    .command('get')
    .description('A user as it is, or as it was at --as-of: built from its events, as GET /users/{id}?asOf')
    .argument('<userId>', "the user's id")
    .option('--as-of <time|position>', 'an RFC 3339 time or a global position (inclusive)', asOfOption)
    .action(async (userId: string, options: { asOf?: AsOf }) => {
      const user = await withHistory(config(), async (app) => {
        // As the API records GET /users/{id}?asOf: a read of the past is a read of the history.
        if (options.asOf !== undefined) await recordHistoryRead(app, 'users get --as-of');
        return app.get(QueryBus).execute(new GetUserAsOfQuery(userId, options.asOf));
      });
      printJson(userRepresentation(user));
    });
}
