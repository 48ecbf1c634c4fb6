import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { ChronicleConfig, ConfigError, parseConfig, unsupportedRuntime } from '@chronicle/config';
import { ChronicleMetrics } from '@chronicle/metrics';
import { startTracing } from '@chronicle/tracing';
import { Projector } from './projector';
import { ProjectorModule } from './projector.module';
import { parseProjectorSettings, ProjectorSettings } from './projector-settings';

/** EX_TEMPFAIL: the lease was lost; a supervisor restarts the process, which then waits its turn. */
const EXIT_LEASE_LOST = 75;

/** EX_CONFIG: a bad configuration or runtime, said in one line on stderr. */
function refuse(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(78);
}

async function main(): Promise<void> {
  const refusal = unsupportedRuntime(process.versions.node);
  if (refusal !== null) refuse(refusal);
  let config: ChronicleConfig;
  let settings: ProjectorSettings;
  try {
    config = parseConfig(process.env);
    settings = parseProjectorSettings(config, process.env);
  } catch (error) {
    if (error instanceof ConfigError) refuse(error.message);
    throw error;
  }
  const tracing = startTracing('chronicle-projector');
  const metrics = new ChronicleMetrics({ processMetrics: config.metricsPort !== 0 });
  // Not buffered: an error while the process starts is written at once (as text until pino takes over).
  const app = await NestFactory.createApplicationContext(ProjectorModule.forRoot(config, settings, metrics));
  app.useLogger(app.get(Logger));
  // SIGTERM/SIGINT: stop the workers after their batch in hand, release the lease, close the stores.
  app.enableShutdownHooks();
  const outcome = await app.get(Projector).run();
  await tracing?.shutdown();
  if (outcome === 'lease-lost') {
    await app.close();
    // Exit even if a client library left a handle open: a stale projector must not linger.
    process.exit(EXIT_LEASE_LOST);
  }
}

void main();
