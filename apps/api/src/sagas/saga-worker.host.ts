import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { BackOff, backOffDelay, ChronicleConfig } from '@chronicle/config';
import { ChronicleMetrics, MetricsSnapshot } from '@chronicle/metrics';

export interface SagaWorkerData {
  config: ChronicleConfig;
  /** A worker's own stdout is a pipe to this thread: it writes the lines the API's terminal expects. */
  stdoutIsTTY: boolean;
}

export type ToSagaWorker = { type: 'metrics'; id: number } | { type: 'stop' };
type FromSagaWorker = { type: 'started' } | { type: 'metrics'; id: number; snapshot: MetricsSnapshot };

/** A worker that stopped on its own is started again after this long, doubling up to the maximum. */
const RESTART_BACK_OFF: BackOff = { initialMs: 1_000, maxMs: 30_000 };
/** A scrape does not wait longer than this for the worker's metrics. */
const METRICS_TIMEOUT_MS = 2_000;
/** Past this, a worker that was asked to stop is terminated. */
const STOP_TIMEOUT_MS = 15_000;

/**
 * Runs the sagas in a worker thread of the API process (the embedded default, where no projector
 * runs them). The e-mail work that follows a reset request for a known address (the account read,
 * the token's events, the message) then never runs on the API's event loop: nothing a client can
 * time tells a known address from an unknown one (API.md). The worker has its own connections to
 * the embedded store, which is safe for several connections by design.
 */
@Injectable()
export class SagaWorkerHost implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Sagas');
  private worker: Worker | null = null;
  private stopping = false;
  /** The worker's exits since it last started. */
  private exitsSinceStarted = 0;
  private restartTimer: NodeJS.Timeout | null = null;
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

  onApplicationBootstrap(): void {
    // Once the server listens: like every background processor, the sagas never delay start-up,
    // and the worker's own start (a Nest application of its own) would compete for the cores.
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    if (server.listening) this.start();
    else
      server.once('listening', () => {
        if (!this.stopping) this.start();
      });
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.removeSource();
    if (this.restartTimer !== null) clearTimeout(this.restartTimer);
    const worker = this.worker;
    if (worker === null) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'stop' } satisfies ToSagaWorker);
    const timeout = setTimeout(() => void worker.terminate(), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timeout);
  }

  private start(): void {
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
        this.exitsSinceStarted = 0;
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
      if (this.stopping) return;
      const delayMs = backOffDelay(++this.exitsSinceStarted, RESTART_BACK_OFF);
      this.logger.error(
        `The sagas' worker stopped (exit code ${code}); starting it again in ${delayMs / 1000} s`,
      );
      this.restartTimer = setTimeout(() => {
        this.restartTimer = null;
        if (!this.stopping) this.start();
      }, delayMs);
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
