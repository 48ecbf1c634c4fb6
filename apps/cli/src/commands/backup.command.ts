import { resolve } from 'node:path';
import { CommandBus } from '@nestjs/cqrs';
import { Command } from 'commander';
import { ReapplyErasuresCommand, sealKey } from '@chronicle/application';
import { ChronicleConfig, ParseConfigOptions } from '@chronicle/config';
import { BackupError } from '../backup/backup-error';
import { backupDataDir, restoreDataDir } from '../backup/data-dir-backup';
import { cliRun, WithApp } from '../cli-run';
import { printJson } from '../output';

export function registerBackupCommands(
  program: Command,
  config: (options?: ParseConfigOptions) => ChronicleConfig,
  restoreTarget: () => Pick<ChronicleConfig, 'dataDir' | 'auditSealKey'>,
  withApp: WithApp,
): void {
  program
    .command('backup <dir>')
    .description(
      'Copy the embedded store (events.db, data-keys.db, limits.db), store-id, token-secret, data-key-secret and ' +
        'outbox/ into a new or empty ' +
        'directory while servers keep running, check the copy and its hash chain, and print its manifest, ' +
        'signed with the seal key (never copied)',
    )
    .option('--allow-broken', 'back up a store whose hash chain breaks, recording chain.ok: false', false)
    .action(async (dir: string, options: { allowBroken: boolean }) => {
      const settings = config();
      if (settings.eventStoreUrl) {
        throw new BackupError(
          'not-embedded',
          'EVENTSTORE_URL is set: the events are in EventStoreDB, which this command does not copy. Back it up ' +
            "with EventStoreDB's own procedure, and MongoDB with its own (docs/operations.md)",
        );
      }
      const result = await backupDataDir(settings.dataDir, resolve(dir), {
        sealKey: sealKey(settings, true)!,
        allowBroken: options.allowBroken,
      });
      if (settings.mongodbUri) {
        result.notes.push(
          "MONGODB_URI is set: the read models, the processors' checkpoints and the data keys (data_keys) are " +
            'in MongoDB, not in this backup: keep a MongoDB backup of data_keys taken after this one, or no ' +
            'personal value in it can be read after a restore; then run `projections rebuild`',
        );
      }
      printJson(result);
    });
  program
    .command('restore <dir>')
    .description(
      'Check a backup made by `backup` (its files, its hash chain against the signed manifest) and copy it into ' +
        'DATA_DIR, which must be empty, absent or hold only the kept audit-seal-key (no server on it); then erase ' +
        'again every subject of the erasure log (ERASURE_LOG) that it holds. Until then no process opens DATA_DIR; ' +
        'run it again to finish a restore of the same backup that was cut short',
    )
    .option(
      '--allow-broken',
      'restore a store backed up with a broken chain (--allow-broken), as it is',
      false,
    )
    .option(
      '--allow-unverified',
      'restore without checking the manifest signature: no seal key at hand, or a backup of format 1',
      false,
    )
    .action(async (dir: string, options: { allowBroken: boolean; allowUnverified: boolean }) => {
      const target = restoreTarget();
      printJson(
        await restoreDataDir(resolve(dir), target.dataDir, {
          sealKey: sealKey(target, false),
          allowBroken: options.allowBroken,
          allowUnverified: options.allowUnverified,
          // Configured once the files are in place: the restored secrets are then DATA_DIR's.
          eraseAgain: () =>
            withApp(config({ finishingRestore: true }), (app) =>
              app.get(CommandBus).execute(new ReapplyErasuresCommand(cliRun())),
            ),
        }),
      );
    });
}
