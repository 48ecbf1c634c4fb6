import { ArgumentMetadata, BadRequestException, Injectable, PipeTransform, Type } from '@nestjs/common';
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { getMetadataStorage } from 'class-validator';
import { targetConstructorToSchema } from 'class-validator-jsonschema';
import { FieldError } from '@chronicle/domain';
import { MERGE_PATCH_MEDIA_TYPE } from './edge';

/** An integer on the wire: digits with an optional sign; `1.5`, `1e3`, ` 7`, `0x10` and `` are not. */
const INTEGER = /^-?\d+$/;

/**
 * The JSON schema of a DTO (query or body), derived from its class-validator rules; unknown
 * members refused. What the service checks and what the document says are both this schema.
 */
export function dtoSchemaOf(dto: Type): DtoSchema {
  return { ...(targetConstructorToSchema(dto) as unknown as DtoSchema), additionalProperties: false };
}

export interface DtoSchema {
  type: 'object';
  properties: Record<string, { type?: string; [keyword: string]: unknown }>;
  required?: string[];
  additionalProperties: false;
}

interface CompiledDto {
  validate: ValidateFunction;
  integers: Set<string>;
  messages: Map<string, string>;
}

// JSON schema's formats (date-time, email, uuid) as the document states them: the same checks.
const ajv = new Ajv({ allErrors: true, coerceTypes: false, strict: true });
addFormats(ajv);
const compiledDtos = new Map<Type, CompiledDto>();

/** A DTO's schema, compiled once. */
function compiledDto(dto: Type): CompiledDto {
  let compiled = compiledDtos.get(dto);
  if (compiled === undefined) {
    const schema = dtoSchemaOf(dto);
    compiled = {
      validate: ajv.compile(schema),
      integers: new Set(
        Object.entries(schema.properties)
          .filter(([, property]) => property.type === 'integer')
          .map(([name]) => name),
      ),
      messages: declaredMessages(dto),
    };
    compiledDtos.set(dto, compiled);
  }
  return compiled;
}

/**
 * What is wrong with a JSON body under its DTO's schema: null when nothing. `malformed` when a
 * member is of the wrong JSON type or missing, or the body is not an object of the DTO's members
 * (a malformed request), else the members break a rule of their value.
 */
export function bodyProblems(dto: Type, body: unknown): { malformed: boolean; errors: FieldError[] } | null {
  const { validate, messages } = compiledDto(dto);
  if (validate(body)) return null;
  const errors = validate.errors ?? [];
  return {
    malformed: errors.some((error) => STRUCTURAL.has(error.keyword)),
    // No repeated members in JSON: an array where a value belongs is of the wrong type, not "given
    // more than once", so no raw query is passed.
    errors: fieldErrors(errors, messages),
  };
}

/** Keywords that say the body is not of the DTO's shape, as opposed to a value breaking a rule. */
const STRUCTURAL = new Set(['type', 'required', 'additionalProperties']);

/**
 * Query strings are validated by a JSON schema compiled once per DTO and derived from the DTO's
 * class-validator rules (class-validator-jsonschema): the DTO stays the one declaration, and a
 * request pays for a compiled check, not for class-transformer and class-validator. Integer
 * parameters are parsed from their wire form first, strictly (JSON-schema type coercion would take
 * `1e3` and `0x10`); any integer is valid, one beyond ±2^53 held at that bound, which no id or
 * page reaches. It runs as a pipe, after the guard: a caller without credentials learns nothing.
 */
@Injectable()
export class QueryValidationPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'query' || metadata.metatype === undefined || metadata.data !== undefined)
      return value;
    const { validate, integers, messages } = compiledDto(metadata.metatype);
    const raw = (value ?? {}) as Record<string, unknown>;
    // No prototype: a parameter named __proto__ stays a plain member, refused as unknown.
    const query = Object.create(null) as Record<string, unknown>;
    for (const name of Object.keys(raw)) {
      const given = raw[name];
      query[name] =
        integers.has(name) && typeof given === 'string' && INTEGER.test(given) ? integerOf(given) : given;
    }
    if (!validate(query)) {
      throw invalidParameters(fieldErrors(validate.errors ?? [], messages, raw));
    }
    return query;
  }
}

function integerOf(digits: string): number {
  return Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Number(digits)));
}

/** The JSON-schema keyword each class-validator rule becomes. */
const KEYWORDS: Record<string, string[]> = {
  isInt: ['type'],
  isString: ['type'],
  min: ['minimum'],
  max: ['maximum'],
  matches: ['pattern', 'format', 'anyOf'],
  isLength: ['minLength', 'maxLength'],
  maxLength: ['maxLength'],
  isEmail: ['format'],
};

/** The messages the DTO declares, by property and JSON-schema keyword, to explain a refusal. */
function declaredMessages(dto: Type): Map<string, string> {
  const messages = new Map<string, string>();
  for (const rule of getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false)) {
    if (typeof rule.message !== 'string') continue;
    for (const keyword of KEYWORDS[rule.name ?? ''] ?? [])
      messages.set(`${rule.propertyName} ${keyword}`, rule.message);
  }
  return messages;
}

/**
 * One error per field and message: a refused alternative (anyOf) says so once, not per branch.
 * `query`, the raw query string's parameters, where a repeated one arrives as an array.
 */
function fieldErrors(
  errors: ErrorObject[],
  messages: Map<string, string>,
  query: Record<string, unknown> = {},
) {
  const unique = new Map<string, FieldError>();
  for (const error of errors) {
    const field = fieldError(error, messages, query);
    unique.set(`${field.field}\n${field.message}`, field);
  }
  return [...unique.values()];
}

function fieldError(
  error: ErrorObject,
  messages: Map<string, string>,
  query: Record<string, unknown>,
): FieldError {
  if (error.keyword === 'additionalProperties') {
    const field = String((error.params as { additionalProperty: string }).additionalProperty);
    return { field, message: `${field} is not a parameter of this endpoint` };
  }
  if (error.keyword === 'required') {
    const field = String((error.params as { missingProperty: string }).missingProperty);
    return { field, message: `${field} is required` };
  }
  const field = error.instancePath.slice(1).split('/')[0];
  if (Array.isArray(query[field])) return { field, message: `${field} must be given once` };
  return {
    field,
    message: messages.get(`${field} ${error.keyword}`) ?? `${field} ${error.message ?? 'is invalid'}`,
  };
}

/** The 400 of query parameters that break their rules, each named with what is wrong. */
export function invalidParameters(errors: FieldError[]): BadRequestException {
  return new BadRequestException({
    type: 'invalid-parameters',
    title: 'Invalid query parameters',
    detail: 'One or more query parameters are invalid.',
    errors,
  });
}

/**
 * A body that must be a JSON object (a create or a merge patch); anything else, an array or
 * `null` included, is a malformed request (400).
 */
export function requireJsonObject(body: unknown, mediaType: string): Record<string, unknown> {
  if (typeof body === 'object' && body !== null && !Array.isArray(body))
    return body as Record<string, unknown>;
  const patch = mediaType === MERGE_PATCH_MEDIA_TYPE;
  throw new BadRequestException({
    type: patch ? 'invalid-patch' : 'invalid-body',
    title: patch ? 'Invalid merge patch' : 'Invalid request body',
    detail: `The body must be a JSON object sent as ${mediaType}.`,
  });
}
