import 'reflect-metadata';
import { ConfigError, parseConfig, unsupportedRuntime } from '@chronicle/config';
import { startTracing } from '@chronicle/tracing';
import { isStoreDamaged, ProcessorHost, StoreLostError } from '@chronicle/event-store';
import { createApp } from './create-app';

/** EX_CONFIG: a bad configuration or DATA_DIR, said in one line on stderr. */
const EXIT_CONFIG = 78;
/** EX_IOERR: the store cannot be read. */
const EXIT_IO = 74;

function stop(code: number, message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  const refusal = unsupportedRuntime(process.versions.node);
  if (refusal !== null) stop(EXIT_CONFIG, refusal);
  let config;
  try {
    config = parseConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) stop(EXIT_CONFIG, error.message);
    throw error;
  }
  const tracing = startTracing('chronicle-api');
  let app;
  try {
    app = await createApp(config);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof StoreLostError) stop(EXIT_CONFIG, error.message);
    throw error;
  }
  // Spans still buffered are sent before the process ends.
  if (tracing !== null)
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onClose', () => tracing.shutdown());
  // A store that cannot be read stops the process, saying so, instead of a retry loop for ever.
  void app.get(ProcessorHost).failed.then((error) => {
    if (isStoreDamaged(error)) {
      stop(EXIT_IO, `The event store cannot be read (${error.message}): restore DATA_DIR from a backup`);
    }
  });
  await app.listen({ port: config.port, host: '0.0.0.0' });
}

void main();
