import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Params } from 'nestjs-pino';
import pino, { type Level, type Logger, type LoggerOptions } from 'pino';
import { clientAddress, QUERY_TOKEN_PARAMETER } from '@chronicle/auth';
import type { Principal } from '@chronicle/application';
import { ChronicleConfig, logDestination } from '@chronicle/config';
import { clientRequestIdOf } from './request-id';

/** Query parameters whose values must never reach a log line. */
const SECRET_PARAMETERS = new Set([QUERY_TOKEN_PARAMETER, 'token']);

/**
 * The URL with the values of secret parameters replaced. Names are compared as the query parser
 * reads them, after percent-decoding, so `access%5Ftoken` is redacted like `access_token`.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const pairs = url.slice(start + 1).split('&');
  for (let i = 0; i < pairs.length; i++) {
    const equals = pairs[i].indexOf('=');
    const rawName = equals < 0 ? pairs[i] : pairs[i].slice(0, equals);
    if (SECRET_PARAMETERS.has(decodedName(rawName).toLowerCase())) pairs[i] = `${rawName}=[redacted]`;
  }
  return `${url.slice(0, start)}?${pairs.join('&')}`;
}

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * The process's one logger: Nest's messages and the request lines both go through it. JSON,
 * or readable lines on a terminal (logDestination).
 */
export function createLogger(config: ChronicleConfig, stdout: { isTTY?: boolean } = process.stdout): Logger {
  return pino(loggerOptions(config), logDestination(stdout));
}

/** The logger's level, and what never reaches a line: headers, passwords and their hashes, tokens. */
export function loggerOptions(config: ChronicleConfig): LoggerOptions {
  return {
    level: config.logLevel,
    redact: {
      paths: ['req.headers', 'res.headers', '*.password', '*.passwordHash', '*.token', '*.access_token'],
      censor: '[redacted]',
    },
  };
}

/**
 * Nest's logger over `logger` while the app is being built, before nestjs-pino's is available: so
 * every message, an error at start-up above all, is written as it happens, in the same JSON.
 */
export function startupLogger(logger: Logger): LoggerService {
  const write =
    (level: Level) =>
    (message: unknown, ...rest: unknown[]) => {
      const context = typeof rest.at(-1) === 'string' ? (rest.at(-1) as string) : undefined;
      if (message instanceof Error) logger[level]({ context, err: message }, message.message);
      else logger[level]({ context }, String(message));
    };
  return {
    log: write('info'),
    error: write('error'),
    warn: write('warn'),
    debug: write('debug'),
    verbose: write('trace'),
    fatal: write('fatal'),
  };
}

/**
 * nestjs-pino as Nest's logger over `logger`, with no per-request middleware: request lines are
 * written by logRequests, and a child logger plus async context per request would cost more
 * than the rest of a GET /customers (see bench/README.md).
 */
export function loggerModuleParams(logger: Logger): Params {
  return { pinoHttp: { logger }, useExisting: true, forRoutes: [] };
}

/** A user agent is the client's to choose: logged, but never at any length. */
const MAX_USER_AGENT_CHARS = 200;

/**
 * One line per request when it completes: who (client address as TRUST_PROXY lets Fastify see
 * it, user agent, the authenticated account), what (method, route template, redacted URL, id)
 * and how it went (status, milliseconds). No headers (Authorization, cookies) and no bodies
 * (passwords), so secrets cannot leak by accident. Client errors are warnings, server errors
 * errors; below the level, a request costs one check.
 */
export function logRequests(fastify: FastifyInstance, logger: Logger): void {
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    logRequest(logger, request, reply);
    done();
  });
}

/**
 * The request line. Written by the onResponse hook, and by the edge for what Fastify refuses
 * before routing (bad percent-encoding, too long a path segment), which runs no hooks.
 */
export function logRequest(logger: Logger, request: FastifyRequest, reply: FastifyReply): void {
  const status = reply.statusCode;
  const level = levelOf(status);
  if (!logger.isLevelEnabled(level)) return;
  const userAgent = request.headers['user-agent'];
  logger[level](
    {
      req: {
        id: request.id,
        clientRequestId: clientRequestIdOf(request),
        method: request.method,
        route: request.routeOptions.url ?? null,
        url: redactUrl(request.url),
        client: clientAddress(request),
        userAgent: userAgent === undefined ? null : userAgent.slice(0, MAX_USER_AGENT_CHARS),
      },
      accountId: (request as { user?: Principal }).user?.accountId ?? null,
      res: { statusCode: status },
      responseTime: reply.elapsedTime,
    },
    'request completed',
  );
}

/**
 * The line of a request Node's HTTP parser refused (bad headers, a timeout): nothing of it could
 * be read but the peer's address.
 */
export function logUnparsedRequest(logger: Logger, id: string, client: string | null, status: number): void {
  const level = levelOf(status);
  if (!logger.isLevelEnabled(level)) return;
  logger[level](
    {
      req: { id, clientRequestId: null, method: null, route: null, url: null, client, userAgent: null },
      accountId: null,
      res: { statusCode: status },
    },
    'request completed',
  );
}

/** Client errors are warnings, server errors errors. */
const levelOf = (status: number): Level => (status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info');

/** How often a listening server looks whether its catch-up with the history is done. */
const READY_POLL_MS = 100;

/**
 * The server's lifecycle, one line each: listening (with the address), ready (start-up, read
 * models included, is done: `hasCaughtUp`), draining (SIGTERM: requests in flight finish), stopped.
 */
export function logLifecycle(
  fastify: FastifyInstance,
  logger: Logger,
  config: ChronicleConfig,
  hasCaughtUp: () => boolean,
): void {
  fastify.addHook('onListen', (done: () => void) => {
    const address = fastify.server.address();
    logger.info(
      { address: typeof address === 'string' ? address : address && `${address.address}:${address.port}` },
      'listening',
    );
    // The catch-up runs in the background after listening: ready once it is done.
    const poll = setInterval(() => {
      if (!hasCaughtUp()) return;
      clearInterval(poll);
      logger.info({ metricsPort: config.metricsPort === 0 ? null : config.metricsPort }, 'ready');
    }, READY_POLL_MS).unref();
    fastify.server.once('close', () => clearInterval(poll));
    done();
  });
  fastify.addHook('preClose', (done: () => void) => {
    logger.info('draining: requests in flight finish, then the server stops');
    done();
  });
  fastify.addHook('onClose', (_instance: FastifyInstance, done: () => void) => {
    logger.info('stopped');
    done();
  });
}
