import { QueryBus } from '@nestjs/cqrs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ExportPersonalDataQuery, ExportSubject } from '@chronicle/application';
import { ChronicleConfig } from '@chronicle/config';
import { parseCustomerNumber } from '@chronicle/domain';
import { printJson } from '../output';
import { recordHistoryRead, withHistory } from './history-cli.module';

function customerNumber(value: string): number {
  const customerId = parseCustomerNumber(value);
  if (customerId === undefined) throw new InvalidArgumentError('must be a customer number');
  return customerId;
}

/** `export --user ID | --customer ID`: the document GET /users/{id}/export or /customers/{id}/export answers. */
export function registerExportCommand(program: Command, config: () => ChronicleConfig): void {
  program
    .command('export')
    .description(
      "A person's or a customer's personal data with its history, built from the event history: " +
        'what GET /users/{id}/export and GET /customers/{id}/export answer',
    )
    .addOption(new Option('--user <userId>', "the user's id (with its account)").conflicts('customer'))
    .addOption(new Option('--customer <id>', "the customer's number").argParser(customerNumber))
    .action(async function (this: Command, options: { user?: string; customer?: number }) {
      const subject: ExportSubject | null =
        options.user !== undefined
          ? { kind: 'user', id: options.user }
          : options.customer !== undefined
            ? { kind: 'customer', id: options.customer }
            : null;
      if (subject === null) this.error('give --user ID or --customer ID', { exitCode: 2 });
      const document = await withHistory(config(), async (app) => {
        // As the API records an export: a read of the history, its audit records included.
        await recordHistoryRead(app, 'export');
        return app.get(QueryBus).execute(new ExportPersonalDataQuery(subject, null));
      });
      printJson(document);
    });
}
