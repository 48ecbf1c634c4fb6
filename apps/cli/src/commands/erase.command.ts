import { CommandBus } from '@nestjs/cqrs';
import { Command, Option } from 'commander';
import { EraseSubjectCommand } from '@chronicle/application';
import { ChronicleConfig } from '@chronicle/config';
import { cliRun, WithApp } from '../cli-run';
import { printJson } from '../output';

/**
 * `erase --user ID | --customer ID`: what DELETE /users/{id} and DELETE /customers/{id} do, through
 * the same command, printing `{ subject, erasedAt, position }` (the first erasure, on a repeat).
 */
export function registerEraseCommand(
  program: Command,
  config: () => ChronicleConfig,
  withApp: WithApp,
): void {
  program
    .command('erase')
    .description(
      'Erase a person (the user with its account) or a customer: their data key is destroyed, so no personal ' +
        'value of theirs can be read again; the history keeps its events, with those values null',
    )
    .addOption(new Option('--user <id>', 'the user id of the person to erase').conflicts('customer'))
    .addOption(new Option('--customer <id>', 'the number of the customer to erase'))
    .action(async (options: { user?: string; customer?: string }, command: Command) => {
      if (options.user === undefined && options.customer === undefined) {
        command.error("error: one of '--user <id>' or '--customer <id>' is required");
      }
      const erase =
        options.user !== undefined
          ? new EraseSubjectCommand('user', options.user, cliRun())
          : new EraseSubjectCommand('customer', options.customer!, cliRun());
      const { subject, erasedAt, position } = await withApp(config(), (app) =>
        app.get(CommandBus).execute(erase),
      );
      printJson({ subject, erasedAt, position });
    });
}
