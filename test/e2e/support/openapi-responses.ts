import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { escape } from './openapi-requests';

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

const DOCUMENT_ID = 'openapi.json';

/**
 * Holds every response an e2e test receives to the OpenAPI document the app serves: its status
 * is declared for the operation, its media type is one the document lists, and its body matches
 * that media type's schema. An error outside any operation (an unknown route) must still be
 * problem details. Violations are collected, and `assertNone` fails the suite with all of them.
 */
export class ResponseChecker {
  readonly violations: string[] = [];
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: Document) {
    addFormats(this.ajv);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  }

  /** Checks every response `fastify` sends, once `checker()` gives a checker (the document loaded). */
  static install(fastify: FastifyInstance, checker: () => ResponseChecker | null): void {
    fastify.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
      const current = checker();
      try {
        current?.check(request, reply, payload);
      } catch (error) {
        current?.violations.push(`${request.method} ${request.url}: ${(error as Error).message}`);
      }
      done(null, payload);
    });
  }

  assertNone(): void {
    if (this.violations.length > 0) {
      throw new Error(`Responses that break the OpenAPI document:\n${this.violations.join('\n')}`);
    }
  }

  private check(request: FastifyRequest, reply: FastifyReply, payload: unknown): void {
    const status = reply.statusCode;
    const mediaType = String(reply.getHeader('content-type') ?? '')
      .split(';')[0]
      .trim();
    const route = request.routeOptions.url;
    const method = request.method.toLowerCase();
    if (route === undefined || route.startsWith('/docs') || method === 'head' || method === 'options') {
      if (status >= 400 && mediaType !== 'application/problem+json')
        this.fail(`a ${status} that is not problem details`);
      return;
    }
    const path = route.replace(/:(\w+)/g, '{$1}');
    const operation = this.document.paths[path]?.[method];
    if (operation === undefined)
      return this.fail(`no operation ${method.toUpperCase()} ${path} in the document`);
    // Every status a client can cause is declared; only a timeout or a server error may fall
    // to the default response.
    const declared = operation.responses[String(status)] !== undefined;
    if (!declared && status < 500 && status !== 408) this.fail(`status ${status} is not declared`);
    const key = declared ? String(status) : 'default';
    const response = operation.responses[key];
    if (response === undefined) return this.fail(`status ${status} is not declared`);
    if (response.content === undefined) {
      if (payloadText(payload) !== '') this.fail(`status ${status} declares no body, but one was sent`);
      return;
    }
    if (!(mediaType in response.content)) {
      return this.fail(
        `media type "${mediaType}" is not declared for ${status} (${Object.keys(response.content).join(', ')})`,
      );
    }
    const pointer = `#/paths/${escape(path)}/${method}/responses/${key}/content/${escape(mediaType)}/schema`;
    let validate = this.validators.get(pointer);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.validators.set(pointer, validate);
    }
    // JSON types are parsed and checked against their schema; text (CSV) is a string.
    const text = payloadText(payload);
    const body: unknown = /^application\/(.+\+)?json$/.test(mediaType) ? JSON.parse(text) : text;
    if (!validate(body)) {
      this.fail(
        `the ${status} ${mediaType} body does not match its schema: ${this.ajv.errorsText(validate.errors)}`,
      );
    }
  }

  private fail(message: string): never {
    throw new Error(message);
  }
}

function payloadText(payload: unknown): string {
  if (payload === null || payload === undefined) return '';
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  throw new Error('a streamed body, which this check cannot read');
}
