import { Inject, Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ChronicleConfig } from '@chronicle/config';
import { HostedProcessor } from '@chronicle/event-store';
import { ChronicleMetrics, MetricsSnapshot } from '@chronicle/metrics';

export interface SagaWorkerData {
  config: ChronicleConfig;
  /** A worker's own stdout is a pipe to this thread: it writes the lines the API's terminal expects. */
  stdoutIsTTY: boolean;
}

export type ToSagaWorker = { type: 'metrics'; id: number } | { type: 'stop' };
type FromSagaWorker = { type: 'started' } | { type: 'metrics'; id: number; snapshot: MetricsSnapshot };

/** A scrape does not wait longer than this for the worker's metrics. */
const METRICS_TIMEOUT_MS = 2_000;
/** Past this, a worker that was asked to stop is terminated. */
const STOP_TIMEOUT_MS = 15_000;

/**
 * Runs the sagas in a worker thread of the API process (the embedded default, where no projector
 * runs them). The e-mail work that follows a reset request for a known address (the account read,
 * the token's events, the message) then never runs on the API's event loop: nothing a client can
 * time tells a known address from an unknown one (API.md). The worker has its own connections to
 * the embedded store, which is safe for several connections by design. A unit of the API's
 * processor host, which starts it where the sagas are placed in the worker, and starts it again
 * with back-off when it stops on its own.
 */
@Injectable()
export class SagaWorkerHost implements HostedProcessor {
  private readonly logger = new Logger('Sagas');
  private worker: Worker | null = null;
  private stopping = false;
  private nextRequest = 0;
  private readonly pending = new Map<number, (snapshot: MetricsSnapshot) => void>();
  private readonly removeSource: () => void;

  constructor(
    @Inject(ChronicleConfig) private readonly config: ChronicleConfig,
    @Inject(ChronicleMetrics) metrics: ChronicleMetrics,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    this.removeSource = metrics.addSource(() => this.workerMetrics());
  }

  /** Resolves once the worker runs its sagas; `ended` hears of a worker that stopped on its own. */
  start(ended: (why: string) => void = () => undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      // Once the server listens: like every background processor, the sagas never delay start-up,
      // and the worker's own start (a Nest application of its own) would compete for the cores.
      const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
      if (server.listening) this.spawn(resolve, ended);
      else
        server.once('listening', () => {
          if (!this.stopping) this.spawn(resolve, ended);
        });
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.removeSource();
    const worker = this.worker;
    if (worker === null) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'stop' } satisfies ToSagaWorker);
    const timeout = setTimeout(() => void worker.terminate(), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timeout);
  }

  private spawn(started: () => void, ended: (why: string) => void): void {
    const entry = join(__dirname, `saga-worker${extname(__filename)}`);
    // From source (tests, `node -r @swc-node/register`), the worker compiles TypeScript as its parent does.
    const fromSource = entry.endsWith('.ts');
    const worker = new Worker(entry, {
      // The sagas allocate little: a young generation of 4 MiB instead of V8's default (a third of
      // the worker's memory) costs them nothing measurable and the process 11 MiB.
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
      workerData: {
        config: this.config,
        stdoutIsTTY: process.stdout.isTTY === true,
      } satisfies SagaWorkerData,
      ...(fromSource
        ? {
            execArgv: ['-r', '@swc-node/register'],
            env: {
              ...process.env,
              SWC_NODE_PROJECT: process.env.SWC_NODE_PROJECT ?? join(__dirname, '../../../../tsconfig.json'),
            },
          }
        : {}),
    });
    this.worker = worker;
    worker.on('message', (message: FromSagaWorker) => {
      if (message.type === 'started') {
        started();
      } else {
        this.pending.get(message.id)?.(message.snapshot);
      }
    });
    worker.on('error', (error: Error) =>
      this.logger.error(`The sagas' worker failed: ${error.message}`, error.stack),
    );
    worker.on('exit', (code) => {
      this.worker = null;
      for (const answer of this.pending.values()) answer([]);
      this.pending.clear();
      if (!this.stopping) ended(`The sagas' worker stopped (exit code ${code})`);
    });
  }

  /** The worker's own metrics (its e-mails, its appends), for this process's /metrics. */
  private workerMetrics(): Promise<MetricsSnapshot> {
    const worker = this.worker;
    if (worker === null) return Promise.resolve([]);
    const id = this.nextRequest++;
    return new Promise<MetricsSnapshot>((resolve) => {
      const timeout = setTimeout(() => answer([]), METRICS_TIMEOUT_MS);
      const answer = (snapshot: MetricsSnapshot) => {
        clearTimeout(timeout);
        this.pending.delete(id);
        resolve(snapshot);
      };
      this.pending.set(id, answer);
      worker.postMessage({ type: 'metrics', id } satisfies ToSagaWorker);
    });
  }
}
