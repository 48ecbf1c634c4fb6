import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Params } from 'nestjs-pino';
import pino, { type Level, type Logger } from 'pino';
import { QUERY_TOKEN_PARAMETER } from '@chronicle/auth';
import { ChronicleConfig } from '@chronicle/config';

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

/** The process's one JSON logger: Nest's messages and the request lines both go through it. */
export function createLogger(config: ChronicleConfig): Logger {
  return pino({
    level: config.logLevel,
    redact: {
      paths: ['req.headers', 'res.headers', '*.password', '*.passwordHash', '*.token', '*.access_token'],
      censor: '[redacted]',
    },
  });
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

/**
 * One line per request when it completes: method, redacted URL and id only, no headers
 * (Authorization, cookies) and no bodies (passwords), so secrets cannot leak by accident.
 * Client errors are warnings, server errors errors; below the level, a request costs one check.
 */
export function logRequests(fastify: FastifyInstance, logger: Logger): void {
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const status = reply.statusCode;
    const level: Level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
    if (logger.isLevelEnabled(level)) {
      logger[level](
        {
          req: { id: request.id, method: request.method, url: redactUrl(request.url) },
          res: { statusCode: status },
          responseTime: reply.elapsedTime,
        },
        'request completed',
      );
    }
    done();
  });
}
