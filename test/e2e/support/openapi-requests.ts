import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Record<string, unknown>;
}
export interface Operation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { content?: Record<string, { examples?: Record<string, unknown> }> }>;
  security?: Record<string, string[]>[];
}
export interface Document {
  paths: Record<string, Record<string, Operation>>;
}

/** A request as the document sees it: its typed parameters and its body. */
export interface DocumentedRequest {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  headers?: Record<string, unknown>;
  contentType?: string;
  body?: unknown;
}

const DOCUMENT_ID = 'openapi.json';

/**
 * Whether a request is valid under the served OpenAPI document: its operation exists, every
 * parameter it sends is declared and matches its schema, the required ones are there, and its
 * body matches the schema of its media type. Shared by the generated client's walk-through and
 * the schema-driven fuzz: both hold their requests to the document the same way.
 */
export class RequestChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly document: Document) {
    addFormats(this.ajv);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  }

  /** Why the request is not valid under the document; empty when it is. */
  problems(method: string, path: string, request: DocumentedRequest): string[] {
    const operation = this.document.paths[path]?.[method.toLowerCase()];
    if (operation === undefined) return [`no operation ${method} ${path}`];
    const pointer = `#/paths/${escape(path)}/${method.toLowerCase()}`;
    const problems: string[] = [];
    const parameters = operation.parameters ?? [];
    for (const where of ['path', 'query', 'headers'] as const) {
      const given = request[where] ?? {};
      const kind = where === 'headers' ? 'header' : where;
      for (const name of Object.keys(given)) {
        const index = parameters.findIndex(
          (parameter) =>
            parameter.in === kind &&
            (kind === 'header'
              ? parameter.name.toLowerCase() === name.toLowerCase()
              : parameter.name === name),
        );
        if (index < 0) {
          // Headers the document does not describe (credentials, Accept, Content-Type) are not its parameters.
          if (kind !== 'header') problems.push(`${kind} parameter ${name} is not declared`);
          continue;
        }
        if (!this.valid(`${pointer}/parameters/${index}/schema`, given[name]))
          problems.push(`${kind} parameter ${name}: ${this.ajv.errorsText(this.lastErrors)}`);
      }
      for (const parameter of parameters) {
        if (parameter.in === kind && parameter.required && !(parameter.name in given))
          problems.push(`${kind} parameter ${parameter.name} is required`);
      }
    }
    const body = operation.requestBody;
    if (body === undefined) {
      if (request.body !== undefined) problems.push('the operation takes no body');
    } else if (request.body === undefined) {
      if (body.required) problems.push('the body is required');
    } else {
      const mediaType = (request.contentType ?? '').split(';')[0].trim();
      if (!(mediaType in body.content)) problems.push(`media type ${mediaType} is not declared`);
      else if (!this.valid(`${pointer}/requestBody/content/${escape(mediaType)}/schema`, request.body))
        problems.push(`body: ${this.ajv.errorsText(this.lastErrors)}`);
    }
    return problems;
  }

  private lastErrors: ValidateFunction['errors'] = null;

  private valid(pointer: string, value: unknown): boolean {
    let validate = this.validators.get(pointer);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.validators.set(pointer, validate);
    }
    const valid = validate(value);
    this.lastErrors = validate.errors;
    return valid;
  }
}

export function escape(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
