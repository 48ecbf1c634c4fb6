import { applyDecorators, Type } from '@nestjs/common';
import {
  ApiBasicAuth,
  ApiBearerAuth,
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  ApiQuery,
  ApiResponse,
  ApiSecurity,
  getSchemaPath,
} from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { ResponsesObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { TooManyAttemptsError } from '@chronicle/application';
import { QUERY_TOKEN_PARAMETER } from '@chronicle/auth';
import { FieldDeclarations } from '@chronicle/domain';
import { Problem, PROBLEM_CONTENT_TYPE, toProblem } from './problem-details';
import { dtoSchemaOf } from './validation';
import { answerLost, IDEMPOTENCY_KEY_SCHEMA, keyInFlight, keyReused } from '../idempotency/idempotency-keys';
import { takesIdempotencyKey } from '../idempotency/idempotency.guard';

class FieldErrorDto {
  @ApiProperty({ example: 'age' })
  field!: string;

  @ApiProperty({ example: 'age must be an integer from 0 to 150' })
  message!: string;
}

/** RFC 9457 problem details, the body of every error. */
export class ProblemDto {
  @ApiProperty({ description: 'A URI reference naming the error.', example: 'validation-error' })
  type!: string;

  @ApiProperty({ example: 'Invalid values' })
  title!: string;

  @ApiProperty({ type: 'integer', minimum: 400, maximum: 599, example: 422 })
  status!: number;

  @ApiPropertyOptional({ example: 'age must be an integer from 0 to 150' })
  detail?: string;

  @ApiPropertyOptional({ type: [FieldErrorDto], description: 'Field problems, when the request had some.' })
  errors?: FieldErrorDto[];
}

const HEADER_DESCRIPTIONS: Record<string, { description: string; schema: object }> = {
  'WWW-Authenticate': {
    description:
      'Both schemes: `Bearer realm="api"` (with `error="invalid_token"` for a rejected token) and `Basic realm="api", charset="UTF-8"`.',
    schema: { type: 'string' },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    schema: { type: 'integer', minimum: 1 },
  },
  'Accept-Patch': {
    description: 'The patch format this resource takes.',
    schema: { type: 'string', const: 'application/merge-patch+json' },
  },
};

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed request: a parameter or body of the wrong type or shape, or more than one set of credentials.',
  401: 'Missing or invalid credentials.',
  403: 'Authenticated, but not allowed.',
  404: 'No such resource.',
  406: 'None of the media types in Accept is offered; the problem lists the supported ones.',
  409: 'The request conflicts with the current state or with another request.',
  410: 'The subject was erased (its personal data destroyed): gone for good.',
  412: "If-Match does not name the resource's current version; nothing changed.",
  413: 'The body is larger than 64 KiB.',
  415: 'The body is of a media type this operation does not take.',
  422: 'Well-formed, but a value breaks a rule.',
  429: 'Rate limited (failed password checks or reset requests per client and per address, in 15 minutes).',
};

/**
 * A refusal no schema can state (an unknown reset token, a wrong password, a password on the
 * common list, a user that does not exist): the document declares it under its status, with its
 * problem type as rendered for the error that causes it.
 */
export interface Refusal {
  why: string;
  rendered: Problem;
}

/** `error`'s refusal, rendered as the service renders it; `why` says when it happens. */
export function refusal(error: Error, why: string): Refusal {
  return { why, rendered: toProblem(error, { method: 'GET', url: '/' }).problem };
}

/**
 * Error responses, as problem details, with the headers each status carries. A status with
 * refusals lists each as an example named by its problem type: the refusals a request valid
 * under the document may still meet.
 */
export function ApiProblems(...answers: (keyof typeof PROBLEM_DESCRIPTIONS | Refusal)[]) {
  const refusals = new Map<number, Refusal[]>();
  for (const answer of answers) {
    if (typeof answer === 'number') refusals.set(answer, refusals.get(answer) ?? []);
    else refusals.set(answer.rendered.status, [...(refusals.get(answer.rendered.status) ?? []), answer]);
  }
  return applyDecorators(
    ApiExtraModels(ProblemDto),
    ...[...refusals].map(([status, declared]) =>
      ApiResponse({ status, ...problemResponse(status, declared) }),
    ),
  );
}

/** What a refusal adds to its status's description. */
const describe = ({ why, rendered }: Refusal) => `\`${rendered.type}\`: ${why}`;

/** The document's response of `status` in problem details, with `declared` as its examples. */
function problemResponse(status: number, declared: Refusal[]) {
  return {
    description: [PROBLEM_DESCRIPTIONS[status], ...declared.map(describe)].join(' '),
    content: {
      [PROBLEM_CONTENT_TYPE]: {
        schema: { $ref: getSchemaPath(ProblemDto) },
        ...(declared.length === 0 ? {} : { examples: examplesOf(declared) }),
      },
    },
    headers: {
      ...(status === 401 ? { 'WWW-Authenticate': HEADER_DESCRIPTIONS['WWW-Authenticate'] } : {}),
      ...(status === 429 ? { 'Retry-After': HEADER_DESCRIPTIONS['Retry-After'] } : {}),
      ...(status === 415 ? { 'Accept-Patch': HEADER_DESCRIPTIONS['Accept-Patch'] } : {}),
    },
  };
}

/** Each refusal as an example named by its problem type. */
const examplesOf = (declared: Refusal[]) =>
  Object.fromEntries(declared.map(({ why, rendered }) => [rendered.type, { summary: why, value: rendered }]));

/** Any request under a limit (failed password checks, reset requests) may meet it. */
export const RATE_LIMITED = refusal(
  new TooManyAttemptsError(60, 'Too many attempts; try again later.'),
  'too many failed password checks or reset requests, from this client or for this address, in 15 minutes.',
);

/**
 * The three ways a request may authenticate (exactly one of them per request); Basic credentials
 * are checked under the failed-login limits, so any such request may get a 429.
 */
export const ApiCredentials = () =>
  applyDecorators(
    ApiBearerAuth('bearer'),
    ApiBasicAuth('basic'),
    ApiSecurity(QUERY_TOKEN_PARAMETER),
    ApiProblems(RATE_LIMITED),
  );

/**
 * The query parameters of a DTO, described by the same JSON schema QueryValidationPipe checks them
 * with (derived from the DTO's class-validator rules), so the document and the service agree.
 * `access_token` is a credential, described by its security scheme instead.
 */
export function ApiQueryFrom(dto: Type, descriptions: Record<string, string>) {
  const schema = dtoSchemaOf(dto);
  return applyDecorators(
    ...Object.entries(schema.properties)
      .filter(([name]) => name !== QUERY_TOKEN_PARAMETER)
      .map(([name, property]) =>
        ApiQuery({
          name,
          required: schema.required?.includes(name) ?? false,
          description: descriptions[name],
          schema: property as never,
        }),
      ),
  );
}

/** The document's schema of one field of an entity's one declaration, with a `note` added. */
function fieldSchema<D extends FieldDeclarations>(declaration: D, field: keyof D & string, note?: string) {
  const schema: Record<string, unknown> = { type: declaration[field].type, ...declaration[field].schema };
  if (note) schema.description = [schema.description, note].filter(Boolean).join(' ');
  return schema;
}

/**
 * Declares `fields` of an entity's one field declaration on `dto` for the document, required or
 * not, with a `note` added to each: the document's schemas come from the declaration that
 * validates the values.
 */
export function declareFields<D extends FieldDeclarations>(
  dto: object,
  declaration: D,
  fields: readonly (keyof D & string)[],
  required: boolean,
  note?: string,
): void {
  const decorate = required ? ApiProperty : ApiPropertyOptional;
  for (const field of fields) decorate(fieldSchema(declaration, field, note))(dto, field);
}

/** The schemas of `fields` of a declaration, by name, with a `note` added to each. */
const fieldSchemas = <D extends FieldDeclarations>(
  declaration: D,
  fields: readonly (keyof D & string)[],
  note?: string,
) => Object.fromEntries(fields.map((field) => [field, fieldSchema(declaration, field, note)]));

/** A merge patch (RFC 7396) of `fields`: any of them, and nothing else (the aggregate refuses the rest). */
export function mergePatchSchema<D extends FieldDeclarations>(
  declaration: D,
  fields: readonly (keyof D & string)[],
  note: string,
) {
  return { type: 'object', properties: fieldSchemas(declaration, fields, note), additionalProperties: false };
}

/**
 * A new record's body: every one of `fields`, the `optional` members beside them, and nothing
 * else (the declaration's parser refuses the rest).
 */
export function newRecordSchema<D extends FieldDeclarations>(
  declaration: D,
  fields: readonly (keyof D & string)[],
  optional: Record<string, object> = {},
) {
  return {
    type: 'object',
    properties: { ...fieldSchemas(declaration, fields), ...optional },
    required: [...fields],
    additionalProperties: false,
  };
}

const REQUEST_ID_HEADER = {
  description: "The request's id: the client's X-Request-Id when it sent a safe one, else a new one.",
  schema: { type: 'string' },
};

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header' as const,
  required: false,
  description:
    'Up to 255 visible ASCII characters, unique per request of this account. The same request under the ' +
    'same key within 24 hours gets the first answer again and writes nothing more; another request ' +
    'under it is 422 (idempotency-key-reused); a repeat while the first runs is 409 (idempotency-key-in-flight); ' +
    'a repeat after the first wrote and the server failed before answering it is 409 (idempotency-key-answer-lost).',
  schema: IDEMPOTENCY_KEY_SCHEMA,
};

/** What a request valid under the document may meet for its Idempotency-Key. */
const IDEMPOTENCY_REFUSALS = [
  refusal(
    keyInFlight(),
    'the first request with this Idempotency-Key is still running; retry when it is answered.',
  ),
  refusal(keyReused(), 'this Idempotency-Key was used for another request (method, path or body).'),
  refusal(
    answerLost(),
    'the first request with this Idempotency-Key was carried out, but the server failed before keeping its answer.',
  ),
];

/** Declares `declared` on an operation's responses, beside the refusals its status already lists. */
function addRefusal(responses: ResponsesObject, declared: Refusal): void {
  const status = declared.rendered.status;
  const response = responses[status] as ReturnType<typeof problemResponse> | undefined;
  if (response === undefined) {
    responses[status] = problemResponse(status, [declared]);
    return;
  }
  response.description = `${response.description} ${describe(declared)}`;
  const media = response.content[PROBLEM_CONTENT_TYPE] as { examples?: Record<string, unknown> };
  media.examples = { ...media.examples, ...examplesOf([declared]) };
}

/**
 * What every operation shares, added once: the X-Request-Id header on every response, and a
 * default response in problem details for what any request may meet (a timeout, an outage).
 */
export function completeDocument(document: OpenAPIObject, publicBaseUrl: string): OpenAPIObject {
  // The docs page's "Try it out" calls the first server: the one it was loaded from (its CSP
  // allows no other origin). The public address follows for clients reading the document elsewhere.
  document.servers = [
    { url: '/', description: 'The server that serves this document' },
    { url: publicBaseUrl, description: 'PUBLIC_BASE_URL' },
  ];
  for (const operations of Object.values(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = operations[method];
      if (operation === undefined) continue;
      if (takesIdempotencyKey(method.toUpperCase())) {
        // Idempotency-Key is taken by every POST and PATCH, with the answers it may bring.
        operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER];
        for (const declared of IDEMPOTENCY_REFUSALS) addRefusal(operation.responses, declared);
      }
      operation.responses.default ??= {
        description: 'Any other error (a timeout, an unavailable store), as problem details.',
        content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: getSchemaPath(ProblemDto) } } },
      };
      for (const response of Object.values(operation.responses)) {
        if (response === undefined || '$ref' in response) continue;
        response.headers = { 'X-Request-Id': REQUEST_ID_HEADER, ...response.headers };
      }
    }
  }
  return document;
}
