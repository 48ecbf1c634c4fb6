import 'reflect-metadata';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HttpAdapterHost } from '@nestjs/core';
import { parseConfig } from '@chronicle/config';
import { ChronicleMetrics } from '@chronicle/metrics';
import { createApp } from '../../../apps/api/src/create-app';
import { SagaWorkerHost } from '../../../apps/api/src/sagas/saga-worker.host';

/**
 * Run as its own process by native-driver.fault.spec.ts: the API on DATA_DIR, whose saga worker
 * thread is stopped and started CYCLES times, each time as the processor host stops and starts
 * it, with a reset request for EMAIL in flight. A last worker then
 * drains what is left. Prints { requested, tokens } (the reset links' tokens in the outbox) once
 * every request is mailed, and exits 0; any abort ends it first.
 */
async function main(): Promise<void> {
  const email = process.env.EMAIL!;
  const cycles = Number(process.env.CYCLES);
  const config = parseConfig(process.env);
  const app = await createApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = await app.getUrl();
  // The app's own worker stops for good; the cycles below start and stop workers of their own.
  await app.get(SagaWorkerHost).stop();
  const adapterHost = app.get(HttpAdapterHost);
  const metrics = app.get(ChronicleMetrics);

  const requestReset = async () => {
    const response = await fetch(`${url}/api/v1/account/password`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    if (response.status !== 202) throw new Error(`A reset request answered ${response.status}`);
  };
  for (let cycle = 0; cycle < cycles; cycle++) {
    const host = new SagaWorkerHost(config, metrics, adapterHost);
    void host.start();
    await requestReset();
    // Stopped at varying points: while it reads, while it mails, while it records.
    await new Promise((resolve) => setTimeout(resolve, (cycle * 37) % 200));
    await host.stop();
  }
  const last = new SagaWorkerHost(config, metrics, adapterHost);
  void last.start();
  const outbox = join(config.dataDir, 'outbox');
  const tokens = () =>
    readdirSync(outbox)
      .filter((name) => name.endsWith('.eml'))
      .map((name) => readFileSync(join(outbox, name), 'utf8'))
      .filter((text) => text.includes(`To: ${email}`))
      .flatMap((text) => /reset-password\?token=([A-Za-z0-9_-]+)/.exec(text)?.[1] ?? []);
  for (const deadline = Date.now() + 60_000; tokens().length < cycles;) {
    if (Date.now() > deadline) throw new Error(`${tokens().length} reset e-mails of ${cycles} within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await last.stop();
  await app.close();
  process.stdout.write(`${JSON.stringify({ requested: cycles, tokens: tokens() })}\n`);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
