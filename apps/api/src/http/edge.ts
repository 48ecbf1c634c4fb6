import { randomUUID } from 'node:crypto';
import { type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { NotFoundException } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import cors from '@fastify/cors';
import type { FastifyHttpOptions, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import helmet from 'helmet';
import type { Logger } from 'pino';
import { ChronicleConfig } from '@chronicle/config';
import { AllowedMethods } from './allowed-methods';
import { PROBLEM_CONTENT_TYPE, sendProblem, toProblem } from './problem-details';
import { logRequest, logUnparsedRequest } from './logging';
import { echoedRequestId, requestIdFor } from './request-id';
import { CHAIN_BROKEN_HEADER } from '../audit/history-chain-watch.service';

export const BODY_LIMIT_BYTES = 64 * 1024;
/** JSON nested deeper than this is refused (400) before it is parsed. */
export const MAX_JSON_DEPTH = 32;
export const JSON_MEDIA_TYPE = 'application/json';
export const MERGE_PATCH_MEDIA_TYPE = 'application/merge-patch+json';

const CONSUMES = 'chronicleConsumes';

/**
 * The media types a route's body may have; a route without it takes no body. Each parser serves
 * only the routes that declare its type, so the merge-patch parser never sees a password form.
 */
export const Consumes = (...mediaTypes: string[]) => RouteConfig({ [CONSUMES]: mediaTypes });

/** Fastify's options for the edge: limits, timeouts, proxies, and problem details for its own errors. */
export function edgeOptions(config: ChronicleConfig, logger: Logger): FastifyHttpOptions<Server> {
  const timeoutMs = config.requestTimeoutSeconds * 1000;
  return {
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: requestIdFor,
    routerOptions: { maxParamLength: 200 },
    trustProxy: config.trustProxy,
    // A request (headers and body) must arrive within the timeout, and the server checks often
    // enough for the limit to mean what it says.
    requestTimeout: timeoutMs,
    http: {
      headersTimeout: timeoutMs,
      connectionsCheckingInterval: Math.min(1000, timeoutMs),
    },
    // Errors Fastify raises before routing (a malformed URL, say) leave as problem details too,
    // and, as no hook runs for them, write their request line here.
    frameworkErrors: (error, request, reply) => {
      setStandardHeaders(request, reply);
      sendProblem(reply, toProblem(error, request));
      logRequest(logger, request, reply);
    },
    clientErrorHandler: (error: Error & { code?: string }, socket: Socket) =>
      answerClientError(error, socket, logger),
  };
}

const apiHeaders = constantHeaders({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  },
});
// The docs page loads its own scripts, styles and images; helmet's default policy allows exactly
// that, less the upgrade to https, which would break it on a plain-http localhost.
const docsHeaders = constantHeaders({
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
});
const DOCS_PREFIX = '/docs';
/**
 * The files of swagger-ui-dist that the docs page loads (Nest's page, its init script and the
 * document are routes of their own). Nest serves the package's whole folder under /docs/*: its
 * package.json, README, source maps and the rest are no one's business.
 */
const DOCS_ASSETS = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
]);

/**
 * The headers every response of a configuration carries: helmet's, and no caching (responses
 * carry account and user data: never cached, so no shared cache keeps a token's answer). They
 * depend on nothing in the request, so they are taken once and set as one object on each reply,
 * rather than by helmet's dozen calls a request.
 */
function constantHeaders(options: Parameters<typeof helmet>[0]): Record<string, string> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader: (name: string, value: string) => (headers[name.toLowerCase()] = value),
    removeHeader: (name: string) => delete headers[name.toLowerCase()],
  };
  helmet(options)({} as never, recorder as never, () => undefined);
  headers['cache-control'] = 'no-store';
  return headers;
}

/** Headers on every response: helmet's security headers, no caching, and the request id. */
function setStandardHeaders(request: FastifyRequest, reply: FastifyReply): void {
  void reply.headers(request.url.startsWith(DOCS_PREFIX) ? docsHeaders : apiHeaders);
  void reply.header('x-request-id', echoedRequestId(request));
}

/** Installs the edge on the Fastify instance, before Nest registers its routes. */
export async function installEdge(fastify: FastifyInstance, config: ChronicleConfig): Promise<void> {
  const allowed = new AllowedMethods(fastify);
  const corsOn = config.corsOrigins !== null;
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    setStandardHeaders(request, reply);
    // A browser's preflight is CORS's to answer when CORS is on; any other OPTIONS is ours.
    if (request.method === 'OPTIONS' && !(corsOn && isPreflight(request))) {
      if (allowed.answerOptions(request, reply)) return;
      // An unknown path: the app's 404, also when CORS's `OPTIONS *` route took the request.
      if (!request.is404) return void reply.callNotFound();
    }
    if (request.routeOptions.url === `${DOCS_PREFIX}/*`) {
      // The static files' route: its parameter is the file's path, percent-decoded.
      const file = (request.params as Record<string, string | undefined>)['*'] ?? '';
      if (!DOCS_ASSETS.has(file)) {
        sendProblem(reply, toProblem(new NotFoundException(), request));
        return;
      }
    }
    done();
  });
  if (config.corsOrigins !== null) {
    await fastify.register(cors, {
      origin: config.corsOrigins === '*' ? '*' : config.corsOrigins,
      methods: ['GET', 'HEAD', 'PATCH', 'PUT', 'POST', 'DELETE'],
      allowedHeaders: [
        'authorization',
        'content-type',
        'accept',
        'if-match',
        'if-none-match',
        'idempotency-key',
        'x-request-id',
      ],
      exposedHeaders: [
        'link',
        'x-total-count',
        'etag',
        'x-request-id',
        'www-authenticate',
        'retry-after',
        'accept-patch',
        CHAIN_BROKEN_HEADER,
        'allow',
      ],
      maxAge: 600,
    });
  }
  // After CORS's hook, so that a 405 carries its headers for a browser to read.
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (request.is404 && allowed.answerUnoffered(request, reply)) return;
    done();
  });
  // One JSON parser for both media types: Fastify's defaults would also take text/plain, and
  // its prototype-poisoning check answers `__proto__` differently from every other member name.
  fastify.removeAllContentTypeParsers();
  for (const mediaType of [JSON_MEDIA_TYPE, MERGE_PATCH_MEDIA_TYPE]) {
    fastify.addContentTypeParser(mediaType, { parseAs: 'string' }, (request, body, done) => {
      const consumes = (request.routeOptions.config as unknown as Record<string, string[] | undefined>)[
        CONSUMES
      ];
      if (consumes === undefined || !consumes.includes(mediaType)) {
        done(unsupportedMediaType(consumes), undefined);
        return;
      }
      try {
        done(null, parseJson(body as string));
      } catch (error) {
        done(error as Error, undefined);
      }
    });
  }
}

const isPreflight = (request: FastifyRequest): boolean =>
  request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined;

function unsupportedMediaType(consumes: string[] | undefined): Error {
  const detail =
    consumes === undefined
      ? 'This endpoint takes no request body.'
      : `The request body must be ${consumes.join(' or ')}.`;
  return Object.assign(new Error(detail), { statusCode: 415 });
}

/**
 * JSON.parse, after a scan that refuses nesting deeper than MAX_JSON_DEPTH (so no later step
 * recurses without bound). JSON.parse makes `__proto__`, `constructor` and `prototype` plain own
 * members: they can never reach an object's prototype, and validation refuses them by name.
 */
export function parseJson(text: string): unknown {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c)
        i++; // backslash: skip the escaped character
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x5b || char === 0x7b) {
      if (++depth > MAX_JSON_DEPTH)
        throw malformed(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
    } else if (char === 0x5d || char === 0x7d) depth--;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw malformed('The request body is not valid JSON.');
  }
}

function malformed(message: string): Error {
  return Object.assign(new SyntaxError(message), { statusCode: 400 });
}

const CLIENT_ERRORS: Record<string, number> = {
  ERR_HTTP_REQUEST_TIMEOUT: 408,
  HPE_HEADER_OVERFLOW: 431,
};

/**
 * What Node's HTTP parser refuses (bad headers, a request that took too long) never reaches
 * Fastify's routing: it is answered here, on the socket, as problem details.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket, logger: Logger): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // The bytes refused may follow a request still being answered (a body sent without a length):
  // HTTP/1.1 answers in order, so its answer leaves first. Node's own handler reads the same field.
  const answering = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (answering && !answering.writableFinished) {
    answering.once('close', () => answerClientError(error, socket, logger));
    return;
  }
  if (socket.writable) {
    const status = CLIENT_ERRORS[error.code ?? ''] ?? 400;
    const body = JSON.stringify({
      type: status === 408 ? 'request-timeout' : status === 431 ? 'headers-too-large' : 'bad-request',
      title: STATUS_CODES[status],
      status,
      detail:
        status === 408
          ? 'The request did not arrive in time.'
          : status === 431
            ? 'The request headers are too large.'
            : 'The request is not valid HTTP.',
    });
    const id = randomUUID();
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${id}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
    logUnparsedRequest(logger, id, socket.remoteAddress ?? null, status);
  }
  socket.destroy(error);
}
