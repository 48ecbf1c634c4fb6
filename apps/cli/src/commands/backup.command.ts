import { resolve } from 'node:path';
import { Command } from 'commander';
import { ChronicleConfig } from '@chronicle/config';
import { backupDataDir, BackupError, restoreDataDir } from '../backup/data-dir-backup';
import { printJson } from '../output';

export function registerBackupCommands(
  program: Command,
  config: () => ChronicleConfig,
  dataDir: () => string,
): void {
  program
    .command('backup <dir>')
    .description(
      'Copy the embedded store (events.db, limits.db), store-id, token-secret and outbox/ into a new or empty ' +
        'directory while servers keep running, check the copy, and print its manifest',
    )
    .action((dir: string) => {
      const settings = config();
      if (settings.eventStoreUrl) {
        throw new BackupError(
          'not-embedded',
          'EVENTSTORE_URL is set: the events are in EventStoreDB, which this command does not copy. Back it up ' +
            "with EventStoreDB's own procedure, and MongoDB with its own (docs/operations.md)",
        );
      }
      const result = backupDataDir(settings.dataDir, resolve(dir));
      if (settings.mongodbUri) {
        result.notes.push(
          "MONGODB_URI is set: the read models and the processors' checkpoints are in MongoDB, not in this " +
            'backup; after a restore, run `projections rebuild`',
        );
      }
      printJson(result);
    });
  program
    .command('restore <dir>')
    .description(
      'Check a backup made by `backup` and copy it into DATA_DIR, which must be empty or absent (no server on it)',
    )
    .action((dir: string) => {
      printJson(restoreDataDir(resolve(dir), dataDir()));
    });
}
