import { ArgumentMetadata, BadRequestException, Injectable, PipeTransform, Type } from '@nestjs/common';
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import { getMetadataStorage } from 'class-validator';
import { targetConstructorToSchema } from 'class-validator-jsonschema';
import { FieldError } from '@chronicle/domain';

/**
 * Query strings are validated by a JSON schema compiled once per DTO, derived from the DTO's
 * class-validator declarations (class-validator-jsonschema): the DTO stays the one declaration,
 * and a request pays for a compiled check, not for class-transformer and class-validator.
 * Parameters are checked in their wire form, strings, so `1e3`, ` 7` and `0x10` are not integers
 * (JSON-schema type coercion would take them); the controller then parses the checked strings.
 * It runs as a pipe, after the guard: a request without credentials learns nothing of the rules.
 */
@Injectable()
export class QueryValidationPipe implements PipeTransform {
  private readonly ajv = new Ajv({ allErrors: true, coerceTypes: false, strict: true });
  private readonly validators = new Map<
    Type,
    { validate: ValidateFunction; messages: Map<string, string> }
  >();

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'query' || metadata.metatype === undefined || metadata.data !== undefined)
      return value;
    const { validate, messages } = this.validatorFor(metadata.metatype);
    if (!validate(value)) {
      throw new BadRequestException({
        type: 'invalid-parameters',
        title: 'Invalid query parameters',
        detail: 'One or more query parameters are invalid.',
        errors: (validate.errors ?? []).map((error) => fieldError(error, messages)),
      });
    }
    return value;
  }

  private validatorFor(dto: Type) {
    let compiled = this.validators.get(dto);
    if (compiled === undefined) {
      compiled = {
        validate: this.ajv.compile({ ...targetConstructorToSchema(dto), additionalProperties: false }),
        messages: declaredMessages(dto),
      };
      this.validators.set(dto, compiled);
    }
    return compiled;
  }
}

/** Each property's message as its DTO declares it (the first fixed one), to explain a refusal. */
function declaredMessages(dto: Type): Map<string, string> {
  const messages = new Map<string, string>();
  for (const rule of getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false)) {
    if (typeof rule.message === 'string' && !messages.has(rule.propertyName)) {
      messages.set(rule.propertyName, rule.message);
    }
  }
  return messages;
}

function fieldError(error: ErrorObject, messages: Map<string, string>): FieldError {
  if (error.keyword === 'additionalProperties') {
    const field = String((error.params as { additionalProperty: string }).additionalProperty);
    return { field, message: `${field} is not a parameter of this endpoint` };
  }
  const field = error.instancePath.slice(1).split('/')[0];
  // A repeated parameter arrives as a list.
  if (error.keyword === 'type') return { field, message: `${field} must be given once, as a single value` };
  return { field, message: messages.get(field) ?? `${field} ${error.message ?? 'is invalid'}` };
}
