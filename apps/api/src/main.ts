import 'reflect-metadata';
import { ConfigError, parseConfig } from '@chronicle/config';
import { startTracing } from '@chronicle/tracing';
import { createApp } from './create-app';

async function main(): Promise<void> {
  let config;
  try {
    config = parseConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  const tracing = startTracing('chronicle-api');
  const app = await createApp(config);
  // Spans still buffered are sent before the process ends.
  if (tracing !== null)
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onClose', () => tracing.shutdown());
  await app.listen({ port: config.port, host: '0.0.0.0' });
}

void main();
