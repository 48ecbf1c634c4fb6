import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { QUERY_TOKEN_PARAMETER } from '@chronicle/auth';
import { ChronicleConfig } from '@chronicle/config';
import { ChronicleMetrics } from '@chronicle/metrics';
import { AppModule } from './app.module';
import { HistoryChainWatch } from './audit/history-chain-watch.service';
import { HealthController } from './health/health.controller';
import { edgeOptions, installEdge } from './http/edge';
import { keepAnswers } from './idempotency/idempotency.guard';
import { completeDocument } from './http/openapi';
import { createLogger, logLifecycle, logRequests, startupLogger } from './http/logging';
import { measureRequests } from './http/request-metrics';
import { traceRequests } from './http/request-tracing';

/** Builds the HTTP application (not yet listening): used by main.ts and by the e2e tests. */
export async function createApp(config: ChronicleConfig): Promise<NestFastifyApplication> {
  const logger = createLogger(config);
  const adapter = new FastifyAdapter(edgeOptions(config, logger));
  const fastify = adapter.getInstance();
  // The process's one registry: process metrics only when something will scrape them.
  const metrics = new ChronicleMetrics({ processMetrics: config.metricsPort !== 0 });
  logRequests(fastify, logger);
  // Known once the app is built; the server listens only after that.
  let hasCaughtUp = (): boolean => false;
  logLifecycle(fastify, logger, config, () => hasCaughtUp());
  measureRequests(fastify, metrics);
  traceRequests(fastify);
  await installEdge(fastify, config);
  keepAnswers(fastify);

  // Graceful shutdown: requests in flight finish, then their kept-alive connections are closed
  // as soon as they fall idle, instead of holding the exit for the 72 s keep-alive timeout.
  fastify.addHook('preClose', (done: () => void) => {
    const closeIdle = setInterval(() => fastify.server.closeIdleConnections(), 50).unref();
    fastify.server.once('close', () => clearInterval(closeIdle));
    done();
  });

  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, logger, metrics),
    adapter,
    {
      // Never buffered: an error while the app is built is written at once.
      logger: startupLogger(logger),
      // Thrown to main.ts, which says what is wrong in one line, rather than a core dump.
      abortOnError: false,
      // The edge's own parsers take the bodies (installEdge).
      bodyParser: false,
    },
  );
  app.useLogger(app.get(Logger));
  const health = app.get(HealthController);
  hasCaughtUp = () => health.hasCaughtUp();
  // The whole chain is walked in the background once the history is applied, never during it.
  app.get(HistoryChainWatch).walkOnceCaughtUp(hasCaughtUp);
  app.enableShutdownHooks();
  // Built on its first request, not at start-up: scanning every route is a tenth of the start.
  const document = () =>
    completeDocument(
      SwaggerModule.createDocument(
        app,
        new DocumentBuilder()
          .setTitle('Chronicle')
          .setDescription('Event-sourced accounts, users and customers. Errors are RFC 9457 problem details.')
          .setVersion('1')
          .setOpenAPIVersion('3.1.0')
          // addBearerAuth would add `bearerFormat: JWT`; these tokens are opaque.
          .addSecurity('bearer', {
            type: 'http',
            scheme: 'bearer',
            description: 'An opaque access token from POST /api/v1/account/tokens.',
          })
          .addBasicAuth(
            { type: 'http', scheme: 'basic', description: 'The e-mail address and password.' },
            'basic',
          )
          .addApiKey(
            {
              type: 'apiKey',
              in: 'query',
              name: QUERY_TOKEN_PARAMETER,
              description:
                'The access token as a query parameter (RFC 6750 §2.3); discouraged: addresses leak.',
            },
            QUERY_TOKEN_PARAMETER,
          )
          .build(),
      ),
      config.publicBaseUrl,
    );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/json' });
  return app;
}
