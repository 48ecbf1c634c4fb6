import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import { ChronicleConfig } from '@chronicle/config';

/** Query parameters whose values must never reach a log line. */
const SECRET_PARAMETERS = /([?&](?:access_token|token)=)[^&#]*/gi;

export function redactUrl(url: string): string {
  return url.replace(SECRET_PARAMETERS, '$1[redacted]');
}

/**
 * Structured JSON logs. Requests are logged by method, redacted URL and id only: no headers
 * (Authorization, cookies) and no bodies (passwords), so secrets cannot leak by accident.
 */
export function loggerParams(config: ChronicleConfig): Params {
  return {
    pinoHttp: {
      level: config.logLevel,
      // Fastify's genReqId has already stored the request id on the raw request.
      genReqId: (request: IncomingMessage) => request.id ?? 'unknown',
      serializers: {
        req: (request: IncomingMessage) => ({
          id: request.id,
          method: request.method,
          url: redactUrl(request.url ?? ''),
        }),
        res: (response: ServerResponse) => ({ statusCode: response.statusCode }),
      },
      redact: {
        paths: ['req.headers', 'res.headers', '*.password', '*.passwordHash', '*.token', '*.access_token'],
        censor: '[redacted]',
      },
      customLogLevel: (_request, response, error) =>
        error || response.statusCode >= 500 ? 'error' : response.statusCode >= 400 ? 'warn' : 'info',
    },
  };
}
