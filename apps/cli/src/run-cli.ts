import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { INestApplicationContext } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { NestFactory } from '@nestjs/core';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import {
  ConcurrencyConflictError,
  EmailTakenError,
  ErasureReceiptError,
  OpenAccountCommand,
  ParkedMessageError,
  RegisterCustomerCommand,
  SeedCustomersCommand,
} from '@chronicle/application';
import {
  auditSealKey,
  ChronicleConfig,
  ConfigError,
  dataDirPath,
  errorMessage,
  parseConfig,
  ParseConfigOptions,
} from '@chronicle/config';
import { DomainError, UnknownEventTypeError, ValidationError } from '@chronicle/domain';
import { HistoryBrokenError, HistoryCopyError } from '@chronicle/event-store';
import { ControlCommandError } from '@chronicle/read-models';
import { CliModule } from './cli.module';
import { BackupError } from './backup/backup-error';
import { cliRun } from './cli-run';
import { registerAuditCommand } from './commands/audit.command';
import { registerBackupCommands } from './commands/backup.command';
import { registerEraseCommand } from './commands/erase.command';
import { registerExportCommand } from './commands/export.command';
import { HistoryProtectError, registerHistoryCommands } from './commands/history.command';
import { registerUsersCommands } from './commands/users.command';
import { CommandFailedError } from './commands/command-failed.error';
import { NoLiveReadModelsError, registerProjectionsCommands } from './commands/projections.command';
import { ProgressReporter } from './commands/progress-reporter';
import { printError, printJson } from './output';
import { PasswordOptions, readPassword } from './password-input';

/** The version in the project's package.json, found upward from here (sources or dist). */
function packageVersion(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const { name, version } = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (name === 'chronicle' && version) return version;
    }
  }
  return 'unknown';
}

function integerOption(value: string): number {
  if (!/^-?\d{1,15}$/.test(value)) throw new InvalidArgumentError('must be an integer');
  return Number(value);
}

function positiveCount(value: string): number {
  const count = integerOption(value);
  if (count < 1 || count > 10_000_000) throw new InvalidArgumentError('must be from 1 to 10000000');
  return count;
}

async function withApp<T>(
  config: ChronicleConfig,
  work: (app: INestApplicationContext) => Promise<T>,
): Promise<T> {
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config), { logger: ['error'] });
  try {
    return await work(app);
  } finally {
    await app.close();
  }
}

/**
 * `restoreTarget` is DATA_DIR and AUDIT_SEAL_KEY alone, for what must not create anything in DATA_DIR
 * (restore).
 */
export function buildProgram(
  config: (options?: ParseConfigOptions) => ChronicleConfig,
  restoreTarget: () => Pick<ChronicleConfig, 'dataDir' | 'auditSealKey'>,
): Command {
  const program = new Command('chronicle')
    .description('Chronicle admin CLI: every command prints JSON')
    .exitOverride()
    // Usage errors are JSON on stderr like every other error; help stays text, for people.
    .configureOutput({
      writeErr: (text) => process.stderr.write(text),
      outputError: (text) => printError({ error: 'usage', message: text.replace(/^error: /, '').trim() }),
    })
    .option('-V, --version', 'print the version as JSON')
    .on('option:version', () => {
      printJson({ version: packageVersion() });
      throw new CommandFailedError(0);
    });

  const accounts = program.command('accounts').description('Accounts and their users');
  accounts
    .command('create')
    .description(
      'Open an account with its user (as POST /api/v1/accounts does over HTTP, with a password instead of an invitation)',
    )
    .requiredOption('--email <email>', 'login e-mail address (unique)')
    .option('--password-stdin', 'read the password (8 to 256 characters) from standard input')
    .option(
      '--password <password>',
      'the password; discouraged: other local users can read it in the process list (use --password-stdin)',
    )
    .requiredOption('--name <name>', "the user's name")
    .requiredOption('--age <age>', "the user's age", integerOption)
    .addOption(new Option('--admin', 'give the account the admin role').conflicts('auditor'))
    .option('--auditor', 'a read-only auditor: reads the audit and past users, nothing else')
    .addHelpText(
      'after',
      '\nWith neither --password-stdin nor --password, a terminal is asked for the password without echo.',
    )
    .action(
      async (
        options: PasswordOptions & { email: string; name: string; age: number; admin?: true; auditor?: true },
      ) => {
        const password = await readPassword(options);
        const result = await withApp(config(), (app) =>
          app.get(CommandBus).execute(
            new OpenAccountCommand(
              {
                email: options.email,
                name: options.name,
                age: options.age,
                roles: options.admin ? ['admin'] : options.auditor ? ['auditor'] : [],
              },
              password,
              cliRun(),
            ),
          ),
        );
        printJson(result);
      },
    );

  const customers = program.command('customers').description('Customers');
  customers
    .command('create')
    .description('Register a customer under the next number (as POST /customers does over HTTP)')
    .requiredOption('--name <name>', "the customer's name")
    .requiredOption('--email <email>', "the customer's e-mail address")
    .action(async (options: { name: string; email: string }) => {
      const { customer } = await withApp(config(), (app) =>
        app.get(CommandBus).execute(new RegisterCustomerCommand({ ...options }, cliRun())),
      );
      printJson({ id: customer.id });
    });
  customers
    .command('seed')
    .description('Register demo customers')
    .requiredOption('--count <n>', 'how many', positiveCount)
    .action(async (options: { count: number }) => {
      const started = process.hrtime.bigint();
      const reporter = new ProgressReporter('customers');
      const onProgress = (created: number) =>
        reporter.update({ done: created, fraction: created / options.count });
      let result;
      try {
        result = await withApp(config(), (app) =>
          app.get(CommandBus).execute(new SeedCustomersCommand(options.count, cliRun(), onProgress)),
        );
        reporter.complete(result.created);
      } finally {
        reporter.stop();
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      printJson({ ...result, seconds: Math.round(seconds * 1000) / 1000 });
    });

  registerAuditCommand(program, config);
  registerUsersCommands(program, config);
  registerEraseCommand(program, config, withApp);
  registerExportCommand(program, config);
  registerHistoryCommands(program, config);
  registerProjectionsCommands(program, config, withApp);
  registerBackupCommands(program, config, restoreTarget, withApp);

  return program;
}

/** Runs the CLI and returns the exit code. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const program = buildProgram(
    (options) => parseConfig(env, options),
    () => ({ dataDir: dataDirPath(env), auditSealKey: auditSealKey(env) }),
  );
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    return reportError(error);
  }
}

function reportError(error: unknown): number {
  if (error instanceof CommandFailedError) return error.exitCode;
  if (error instanceof CommanderError) {
    // Commander has already printed its message (usage errors, --help).
    return error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof ValidationError) {
    printError({ error: error.code, message: 'Invalid values', errors: error.errors });
  } else if (
    error instanceof DomainError ||
    error instanceof EmailTakenError ||
    error instanceof ConcurrencyConflictError
  ) {
    printError({ error: error.code, message: error.message });
  } else if (
    error instanceof NoLiveReadModelsError ||
    error instanceof ControlCommandError ||
    error instanceof ParkedMessageError ||
    error instanceof BackupError ||
    error instanceof ErasureReceiptError ||
    error instanceof HistoryProtectError ||
    error instanceof HistoryBrokenError ||
    error instanceof HistoryCopyError ||
    error instanceof UnknownEventTypeError
  ) {
    printError({ error: error.code, message: error.message });
  } else if (error instanceof ConfigError) {
    printError({ error: 'invalid-configuration', message: error.message });
  } else {
    printError({ error: 'internal-error', message: errorMessage(error) });
  }
  return 1;
}
