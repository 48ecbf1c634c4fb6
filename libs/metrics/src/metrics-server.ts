import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ChronicleConfig, errorMessage } from '@chronicle/config';
import { ChronicleMetrics } from './chronicle-metrics';

/** What a route on the metrics listener answers. */
export interface OperatorResponse {
  status: number;
  contentType: string;
  body: string;
}

export type OperatorRoute = () => Promise<OperatorResponse>;

/**
 * The operator's listener on METRICS_PORT (0: none), apart from the public port so that metrics
 * are never exposed to API clients: GET /metrics, plus routes a process adds (the projector's
 * /health/*). It listens once the application has started and closes with it.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private readonly routes = new Map<string, OperatorRoute>();
  private server: Server | null = null;

  constructor(
    @Inject(ChronicleConfig) private readonly config: ChronicleConfig,
    @Inject(ChronicleMetrics) metrics: ChronicleMetrics,
  ) {
    this.route('/metrics', async () => ({
      status: 200,
      contentType: metrics.registry.contentType,
      body: await metrics.exposition(),
    }));
  }

  route(path: string, answer: OperatorRoute): void {
    this.routes.set(path, answer);
  }

  /** The port listened on, null when METRICS_PORT is 0. */
  get port(): number | null {
    return this.server === null ? null : (this.server.address() as AddressInfo).port;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.metricsPort === 0) return;
    const server = createServer((request, response) => void this.answer(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE'
            ? new Error(
                `METRICS_PORT ${this.config.metricsPort} is in use (another Chronicle process on this host?): ` +
                  'give each process its own METRICS_PORT, or 0 for none',
              )
            : error,
        ),
      );
      server.listen(this.config.metricsPort, '0.0.0.0', () => {
        server.removeAllListeners('error');
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`Metrics listening on port ${this.port}`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (server === null) return;
    this.server = null;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0];
    const route = this.routes.get(path);
    let answer: OperatorResponse;
    if (route === undefined) {
      answer = { status: 404, contentType: 'text/plain', body: 'Not found\n' };
    } else if (request.method !== 'GET' && request.method !== 'HEAD') {
      answer = { status: 405, contentType: 'text/plain', body: 'Method not allowed\n' };
    } else {
      try {
        answer = await route();
      } catch (error) {
        this.logger.error(`${path} failed: ${errorMessage(error)}`);
        answer = { status: 500, contentType: 'text/plain', body: 'Internal error\n' };
      }
    }
    response.writeHead(answer.status, {
      'content-type': answer.contentType,
      'cache-control': 'no-store',
      ...(answer.status === 405 ? { allow: 'GET, HEAD' } : {}),
    });
    response.end(request.method === 'HEAD' ? undefined : answer.body);
  }
}
