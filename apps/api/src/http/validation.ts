import { BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';
import { FieldError } from '@chronicle/domain';

function fieldErrors(errors: ValidationError[], prefix = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = `${prefix}${error.property}`;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...fieldErrors(error.children ?? [], `${field}.`)];
  });
}

/**
 * class-validator for query strings and bodies: unknown members are refused, and the problem
 * lists each field's errors. Query parameters of the wrong type are a 400 (API.md).
 */
export function queryValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    exceptionFactory: (errors) =>
      new BadRequestException({
        type: 'invalid-parameters',
        title: 'Invalid query parameters',
        detail: 'One or more query parameters are invalid.',
        errors: fieldErrors(errors),
      }),
  });
}
