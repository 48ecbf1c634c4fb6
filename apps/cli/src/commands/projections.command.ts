import { CommandBus } from '@nestjs/cqrs';
import { Command, Option } from 'commander';
import { ChronicleConfig } from '@chronicle/config';
import { CheckpointStore, EventStore, openCheckpointStore, openEventStore } from '@chronicle/event-store';
import { passwordSaga, projectionsStatus, retryParkedMessage, SystemClock } from '@chronicle/application';
import {
  ALL_PROJECTIONS,
  ControlCommand,
  ControlResult,
  MemoryReadStore,
  ParkedSummary,
  MemoryRebuildTarget,
  READ_MODELS_CHECKPOINT,
  ReadModelRebuilder,
  ReadModelSnapshots,
  RebuildProgress,
  runOnRunningServers,
  VerifyResult,
} from '@chronicle/read-models';
import { MongoReadStore, MongoRebuildTarget } from '@chronicle/read-models/mongo';
import { WithApp } from '../cli-run';
import { printJson } from '../output';
import { CommandFailedError } from './command-failed.error';
import { ProgressReporter } from './progress-reporter';

/** Verify on the embedded default with no server running: there are no live models to compare. */
export class NoLiveReadModelsError extends Error {
  readonly code = 'no-live-read-models';
  constructor() {
    super(
      'No server is running on this DATA_DIR: the in-memory read models exist only inside a running ' +
        'server, which builds them from the events at start-up. Start the server, then verify.',
    );
    this.name = 'NoLiveReadModelsError';
  }
}

interface OperationOptions {
  onProgress(progress: RebuildProgress): void;
  signal: AbortSignal;
  /** A rebuild of this projection alone. */
  projection?: string;
}

export function registerProjectionsCommands(
  program: Command,
  config: () => ChronicleConfig,
  withApp: WithApp,
): void {
  const projections = program
    .command('projections')
    .description('Read models and sagas: status, parked messages, rebuild and verify');
  const parked = projections.command('parked').description('Messages a processor gave up on');
  parked
    .command('retry <processor> <event-id>')
    .description(
      'Run a parked saga message again now; unparked if it succeeds, parked with the new reason if not',
    )
    .action(async (processor: string, eventId: string) => {
      printJson(
        await withApp(config(), (app) =>
          retryParkedMessage(
            app.get(EventStore),
            app.get(CheckpointStore),
            app.get(CommandBus),
            processor,
            eventId,
          ),
        ),
      );
    });
  parked
    .command('drop <processor> <event-id>')
    .description('Forget a parked message: it will never be handled')
    .action(async (processor: string, eventId: string) => {
      const dropped = await withApp(config(), (app) => app.get(CheckpointStore).unpark(processor, eventId));
      printJson({ dropped });
      if (!dropped) throw new CommandFailedError(1);
    });
  projections
    .command('rebuild')
    .description('Replay every event into fresh read models and swap them in once caught up')
    .addOption(
      new Option('--projection <name>', 'rebuild this projection alone; the others stay as they are').choices(
        ALL_PROJECTIONS.map((projection) => projection.name),
      ),
    )
    .action(async ({ projection }: { projection?: string }) => {
      for (const result of await withProgress((options) =>
        run(config(), 'rebuild', { ...options, projection }),
      )) {
        printJson(result);
        warnOfParked(
          result.parked,
          'parked as the live read models park them; `projections status` lists them',
        );
      }
    });
  projections
    .command('status')
    .description(
      "Each projection's and saga's checkpoint, lag in events and seconds, the parked messages and the store's " +
        'head (on the embedded default, the read models only while a server runs)',
    )
    .action(async () => {
      for (const status of await statusWhereTheModelsAre(config())) printJson(status);
    });
  projections
    .command('verify')
    .description('Replay every event into a scratch copy and compare it with the live read models')
    .action(async () => {
      const results = await withProgress((options) => run(config(), 'verify', options));
      for (const result of results) {
        printJson(result);
        warnOfParked(result.parked, 'the read models cannot be shown to hold what they changed');
      }
      if (results.some((result: VerifyResult) => result.differences > 0 || result.parked.count > 0))
        throw new CommandFailedError(1);
    });
}

/**
 * Events the replay could not project (the live processor parks them: a type this build does not
 * know, a projection that throws): one line on stderr naming the first, besides the result.
 */
function warnOfParked(parked: ParkedSummary, outcome: string): void {
  const [first] = parked.first;
  if (first === undefined) return;
  process.stderr.write(
    `${JSON.stringify({
      warning: 'unprojectable-events',
      message:
        `${parked.count} event(s) could not be projected, the first ${first.type} at position ${first.position} ` +
        `in ${first.stream} (${first.reason}): ${outcome}`,
    })}\n`,
  );
}

/** Ctrl-C abandons the operation: the new generation is dropped and the live models stay. */
async function withProgress<T extends Array<{ events: number }>>(
  work: (options: OperationOptions) => Promise<T>,
): Promise<T> {
  const reporter = new ProgressReporter('events');
  const controller = new AbortController();
  const onSignal = () => controller.abort(new Error('Interrupted'));
  process.once('SIGINT', onSignal);
  try {
    const result = await work({
      onProgress: ({ events, fraction }) => reporter.update({ done: events, fraction }),
      signal: controller.signal,
    });
    reporter.complete(result[0]?.events);
    return result;
  } finally {
    process.off('SIGINT', onSignal);
    reporter.stop();
  }
}

/**
 * The status query where the read models are: on MongoDB, here; on the embedded default, inside
 * each running server (one line each); with no server running, here without the read models
 * (they live only in a server's memory), the sagas' checkpoints and parked messages being durable.
 */
async function statusWhereTheModelsAre(config: ChronicleConfig): Promise<object[]> {
  if (!config.mongodbUri) {
    const served = await runOnRunningServers(config.dataDir, 'status');
    if (served.length > 0) return served;
  }
  const readStore = config.mongodbUri ? await MongoReadStore.connect(config.mongodbUri) : null;
  const eventStore = await openEventStore(config);
  try {
    const checkpoints = await openCheckpointStore(config);
    try {
      return [await projectionsStatus(eventStore, readStore, checkpoints, new SystemClock())];
    } finally {
      await checkpoints.close();
    }
  } finally {
    await eventStore.close();
    await readStore?.close();
  }
}

/**
 * Where the live read models are decides who does the work: MongoDB collections are shared, so
 * the CLI rebuilds them itself; in-memory models live in the API servers, so each running server
 * is asked over its control socket. With no server running, a rebuild removes the models'
 * snapshot, so that the next start builds them from the events, and replays into a throwaway
 * generation, which checks the history replays cleanly.
 */
async function run<C extends ControlCommand>(
  config: ChronicleConfig,
  command: C,
  options: OperationOptions,
): Promise<Array<ControlResult<C>>> {
  if (config.mongodbUri) {
    const live = await MongoReadStore.connect(config.mongodbUri);
    try {
      return [await runHere(config, command, new MongoRebuildTarget(live, config.mongodbUri), options)];
    } finally {
      await live.close();
    }
  }
  const served = await runOnRunningServers(config.dataDir, command, options);
  if (served.length > 0) return served;
  if (command === 'verify') throw new NoLiveReadModelsError();
  await ReadModelSnapshots.discard(config.dataDir);
  const scratch = new MemoryReadStore();
  try {
    return [
      await runHere(config, command, new MemoryRebuildTarget(scratch, READ_MODELS_CHECKPOINT), options),
    ];
  } finally {
    await scratch.close();
  }
}

async function runHere<C extends ControlCommand>(
  config: ChronicleConfig,
  command: C,
  target: MongoRebuildTarget | MemoryRebuildTarget,
  options: OperationOptions,
): Promise<ControlResult<C>> {
  const eventStore: EventStore = await openEventStore(config);
  try {
    const checkpoints = await openCheckpointStore(config);
    try {
      const rebuilder = new ReadModelRebuilder(eventStore, target, ALL_PROJECTIONS, READ_MODELS_CHECKPOINT, {
        checkpoints,
        names: [passwordSaga.name],
      });
      const result =
        command === 'rebuild' ? await rebuilder.rebuild(options) : await rebuilder.verify(options);
      return result as ControlResult<C>;
    } finally {
      await checkpoints.close();
    }
  } finally {
    await eventStore.close();
  }
}
