import { STATUS_CODES } from 'node:http';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ConcurrencyConflictError,
  EmailTakenError,
  ForbiddenError,
  PreconditionFailedError,
  SecurityEvents,
  TooManyAttemptsError,
} from '@chronicle/application';
import {
  AlreadyExistsError,
  CredentialsRevokedError,
  ErasedError,
  FieldError,
  InvalidResetTokenError,
  NotFoundError,
  PasswordChangedMeanwhileError,
  UnknownEventTypeError,
  SecurityEventType,
  ValidationError,
  WrongPasswordError,
} from '@chronicle/domain';
import { isStoreUnavailable, SubjectErasedError } from '@chronicle/event-store';
import { securityObservationOf } from '@chronicle/auth';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** RFC 9457 problem details; `type` is a relative URI naming the error. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

export interface RenderedProblem {
  problem: Problem;
  headers: Record<string, string | string[]>;
}

const DEFAULT_TYPES: Record<number, string> = {
  400: 'bad-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  406: 'not-acceptable',
  409: 'conflict',
  410: 'erased',
  412: 'precondition-failed',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  422: 'validation-error',
  429: 'too-many-requests',
  500: 'internal-error',
  503: 'service-unavailable',
};

function problem(status: number, fields: Partial<Problem> = {}): Problem {
  const { type, title, detail, ...rest } = fields;
  const result: Problem = {
    type: type ?? DEFAULT_TYPES[status] ?? (status >= 500 ? 'internal-error' : 'bad-request'),
    title: title ?? STATUS_CODES[status] ?? 'Error',
    status,
    ...rest,
  };
  if (detail !== undefined) result.detail = detail;
  return result;
}

/** What a 503 asks a client to wait before trying again. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

const BEARER_CHALLENGE = 'Bearer realm="api"';
const BASIC_CHALLENGE = 'Basic realm="api", charset="UTF-8"';

/** Turns anything thrown while serving a request into problem details and headers. */
export function toProblem(error: unknown, request: { method: string; url: string }): RenderedProblem {
  const rendered = problemOf(error, request);
  const { detail } = rendered.problem;
  if (detail !== undefined && quotesUrl(detail, request.url)) {
    // Nest's 404 and Fastify's bad-URL 400 quote the URL, whose path or query may hold a token.
    rendered.problem.detail =
      rendered.problem.status === 404
        ? 'Nothing is served at this path.'
        : 'The request URL cannot be read (bad percent-encoding or too long a part).';
  }
  return rendered;
}

/** Whether a detail repeats the request's path (other than `/`) or any of its query string. */
function quotesUrl(detail: string, url: string): boolean {
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  return (path.length > 1 && detail.includes(path)) || (query >= 0 && detail.includes(url.slice(query)));
}

function problemOf(error: unknown, request: { method: string }): RenderedProblem {
  const headers: Record<string, string | string[]> = {};
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const body = error.getResponse();
    const fields: Partial<Problem> =
      typeof body === 'object' && body !== null && 'type' in body
        ? { ...(body as Partial<Problem>) }
        : { detail: typeof body === 'string' ? body : messageOf(body) };
    if (status === 401) {
      const challenge = fields.challenge as { invalidToken?: boolean } | undefined;
      delete fields.challenge;
      headers['www-authenticate'] = [
        challenge?.invalidToken ? `${BEARER_CHALLENGE}, error="invalid_token"` : BEARER_CHALLENGE,
        BASIC_CHALLENGE,
      ];
    }
    if (status === 415 && request.method === 'PATCH') {
      headers['accept-patch'] = 'application/merge-patch+json';
    }
    if (status === 429 && typeof fields.retryAfter === 'number') {
      headers['retry-after'] = String(fields.retryAfter);
    }
    if (status === 503) {
      // A failed readiness check says which checks failed and how far a catch-up is.
      if (typeof body === 'object' && body !== null && 'details' in body) {
        fields.detail = 'Not ready: see checks.';
        fields.checks = body.details;
      }
      headers['retry-after'] = String(UNAVAILABLE_RETRY_AFTER_SECONDS);
    }
    return { problem: problem(status, { ...fields, status }), headers };
  }
  if (error instanceof TooManyAttemptsError) {
    // The one answer of every limit: the same whether or not the address has an account.
    headers['retry-after'] = String(error.retryAfterSeconds);
    return {
      problem: problem(429, { type: 'too-many-requests', title: 'Too Many Requests', detail: error.message }),
      headers,
    };
  }
  if (error instanceof CredentialsRevokedError) {
    // What the guard answers for a revoked token: the request's credentials are stale.
    headers['www-authenticate'] = [`${BEARER_CHALLENGE}, error="invalid_token"`, BASIC_CHALLENGE];
    return {
      problem: problem(401, { type: 'unauthorized', title: 'Unauthorized', detail: error.message }),
      headers,
    };
  }
  if (error instanceof ValidationError) {
    return {
      problem: problem(422, {
        type: error.code,
        title: 'Invalid values',
        detail: error.message,
        errors: error.errors,
      }),
      headers,
    };
  }
  // A password changed meanwhile is a WrongPasswordError too: the same answer.
  if (error instanceof InvalidResetTokenError || error instanceof WrongPasswordError) {
    return {
      problem: problem(400, { type: error.code, title: 'Bad Request', detail: error.message }),
      headers,
    };
  }
  if (error instanceof NotFoundError) return { problem: problem(404, { detail: error.message }), headers };
  // Gone for good, by an erasure: its store refuses to write about it too.
  if (error instanceof ErasedError || error instanceof SubjectErasedError) {
    return { problem: problem(410, { type: 'erased', detail: error.message }), headers };
  }
  if (error instanceof ForbiddenError) return { problem: problem(403, { detail: error.message }), headers };
  if (error instanceof PreconditionFailedError)
    return { problem: problem(412, { detail: error.message }), headers };
  if (error instanceof EmailTakenError) {
    return { problem: problem(409, { type: 'email-taken', detail: error.message }), headers };
  }
  if (error instanceof AlreadyExistsError || error instanceof ConcurrencyConflictError) {
    return { problem: problem(409, { detail: error.message }), headers };
  }
  if (error instanceof UnknownEventTypeError) {
    // Not the client's doing, and not over until an operator acts: the log line names the stream and position.
    headers['retry-after'] = String(UNAVAILABLE_RETRY_AFTER_SECONDS);
    return {
      problem: problem(503, {
        type: error.code,
        detail:
          `The history of this resource holds an event this version of the service does not know ` +
          `(${error.type}): it cannot be changed until a version that knows it runs.`,
      }),
      headers,
    };
  }
  if (isStoreUnavailable(error)) {
    headers['retry-after'] = String(UNAVAILABLE_RETRY_AFTER_SECONDS);
    return {
      problem: problem(503, { detail: 'A store the service needs is unavailable; try again later.' }),
      headers,
    };
  }
  const fastify = fastifyError(error);
  if (fastify) {
    if (fastify.status === 415 && request.method === 'PATCH')
      headers['accept-patch'] = 'application/merge-patch+json';
    return { problem: problem(fastify.status, { type: fastify.type, detail: fastify.detail }), headers };
  }
  return { problem: problem(500, { detail: 'An unexpected error occurred.' }), headers };
}

function messageOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || !('message' in body)) return undefined;
  const message = body.message;
  return Array.isArray(message) ? message.join('; ') : typeof message === 'string' ? message : undefined;
}

/** Fastify's own client errors (body parsing, size, media type) carry a statusCode below 500. */
function fastifyError(error: unknown): { status: number; type?: string; detail: string } | null {
  if (typeof error !== 'object' || error === null) return null;
  const { statusCode, code, message } = error as { statusCode?: unknown; code?: unknown; message?: unknown };
  if (typeof statusCode !== 'number' || statusCode < 400 || statusCode >= 500) return null;
  const detail = typeof message === 'string' ? message : (STATUS_CODES[statusCode] ?? 'Bad request');
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return { status: 413, detail: 'The request body is larger than 64 KiB.' };
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return { status: 415, detail: 'The Content-Type of the request body is not supported.' };
  }
  // The edge's JSON parser explains itself (invalid, or nested too deep); Fastify's own do not.
  if (error instanceof SyntaxError) return { status: 400, type: 'malformed-json', detail };
  if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return { status: 400, type: 'malformed-json', detail: 'The request body is not valid JSON.' };
  }
  return { status: statusCode, detail };
}

export function sendProblem(reply: FastifyReply, rendered: RenderedProblem): void {
  void reply
    .status(rendered.problem.status)
    .headers(rendered.headers)
    .header('content-type', PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(rendered.problem));
}

/** The security event an error is, if any (the guard records failed logins and 403s itself). */
function securityEventOf(error: unknown): SecurityEventType | null {
  if (error instanceof TooManyAttemptsError) return 'RateLimited.v1';
  // Changed meanwhile, `old` was right when checked: no wrong password was tried.
  if (error instanceof WrongPasswordError && !(error instanceof PasswordChangedMeanwhileError)) {
    return 'OldPasswordRejected.v1';
  }
  if (error instanceof InvalidResetTokenError) return 'ResetTokenRejected.v1';
  return null;
}

/**
 * Every error leaves as problem details. A 5xx the code did not answer on purpose (a bug, an
 * outage) is logged with its stack, which never leaves; one it did (readiness while catching up)
 * has its request line, at error level, and no stack that would say anything.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Problems');

  constructor(private readonly security: SecurityEvents) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const securityEvent = securityEventOf(error);
    if (securityEvent !== null) this.security.observe(securityEvent, securityObservationOf(request));
    const rendered = toProblem(error, request);
    if (rendered.problem.status >= 500 && !(error instanceof HttpException))
      this.logger.error({ err: error, requestId: request.id }, 'Request failed');
    sendProblem(http.getResponse<FastifyReply>(), rendered);
  }
}
