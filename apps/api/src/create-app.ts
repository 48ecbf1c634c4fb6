import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Logger } from 'nestjs-pino';
import { ChronicleConfig } from '@chronicle/config';
import { AppModule } from './app.module';
import { installHotPaths } from './http/hot-path';
import { createLogger, logRequests } from './http/logging';
import { requestIdFor } from './http/request-id';
import { MERGE_PATCH_MEDIA_TYPE } from './users/user-representations';

export const BODY_LIMIT_BYTES = 64 * 1024;

/** Builds the HTTP application (not yet listening): used by main.ts and by the e2e tests. */
export async function createApp(config: ChronicleConfig): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: requestIdFor,
    routerOptions: { maxParamLength: 200 },
  });
  const fastify = adapter.getInstance();
  const logger = createLogger(config);
  logRequests(fastify, logger);
  // JSON.parse keeps `__proto__` as a plain member, so the patch validator refuses it by name (422).
  fastify.addContentTypeParser(MERGE_PATCH_MEDIA_TYPE, { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(
        Object.assign(new SyntaxError('The request body is not valid JSON.'), { statusCode: 400 }),
        undefined,
      );
    }
  });
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    void reply.header('x-request-id', request.id).header('cache-control', 'no-store');
    // A token in the address can leak through logs, history and Referer: keep it out of all three.
    if (request.url.includes('access_token=')) void reply.header('referrer-policy', 'no-referrer');
    done();
  });

  // Graceful shutdown: requests in flight finish, then their kept-alive connections are closed
  // as soon as they fall idle, instead of holding the exit for the 72 s keep-alive timeout.
  fastify.addHook('preClose', (done: () => void) => {
    const closeIdle = setInterval(() => fastify.server.closeIdleConnections(), 50).unref();
    fastify.server.once('close', () => clearInterval(closeIdle));
    done();
  });

  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, logger), adapter, {
    bufferLogs: true,
  });
  app.useLogger(app.get(Logger));
  installHotPaths(app, fastify);
  app.enableShutdownHooks();
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Chronicle')
      .setDescription('Event-sourced accounts, users and customers. Errors are RFC 9457 problem details.')
      .setVersion('1')
      .setOpenAPIVersion('3.1.0')
      .addBearerAuth()
      .addBasicAuth()
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/json' });
  return app;
}
