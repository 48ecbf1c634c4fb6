import fc from 'fast-check';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/** A JSON schema as the OpenAPI document states one. */
export type Schema = Record<string, unknown>;

const ajv = new Ajv2020({ strict: false });
addFormats(ajv);

/** Values by format, before the schema's other keywords filter them. */
const FORMATS: Record<string, () => fc.Arbitrary<string>> = {
  'date-time': () =>
    fc.oneof(
      fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
      fc
        .tuple(
          fc.date({
            min: new Date('0000-01-01T00:00:00Z'),
            max: new Date('9999-12-31T23:59:59Z'),
            noInvalidDate: true,
          }),
          fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }),
        )
        .map(([date, offset]) => {
          const local = new Date(date.getTime() + offset * 60_000).toISOString().slice(0, 19);
          const sign = offset < 0 ? '-' : '+';
          const minutes = Math.abs(offset);
          const pad = (n: number) => String(n).padStart(2, '0');
          return `${local}${sign}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
        }),
    ),
  email: () => fc.emailAddress(),
  uuid: () => fc.uuid(),
};

/** fast-check cannot generate from lookaheads: generate without them, and let the pattern itself filter. */
const withoutLookaheads = (pattern: string) => pattern.replace(/\(\?=[^()]*(\([^()]*\))?[^()]*\)/g, '');

function stringOf(schema: Schema): fc.Arbitrary<string> {
  const format = schema.format as string | undefined;
  const pattern = schema.pattern as string | undefined;
  if (format !== undefined && FORMATS[format] !== undefined) return FORMATS[format]();
  if (pattern !== undefined) return fc.stringMatching(new RegExp(withoutLookaheads(pattern), 'u'));
  return fc.string({
    unit: 'grapheme',
    minLength: (schema.minLength as number | undefined) ?? 0,
    maxLength: Math.min((schema.maxLength as number | undefined) ?? 40, 300),
  });
}

/**
 * Values valid under `schema` (resolved in `document`): generated from its keywords, then held to
 * the whole schema by ajv, so that whatever this cannot express exactly is filtered, never let through.
 */
export function validValues(schema: Schema, document: object): fc.Arbitrary<unknown> {
  const resolved = resolve(schema, document);
  const validate = ajv.compile(resolved);
  return candidates(resolved, document).filter((value) => validate(value));
}

function candidates(schema: Schema, document: object): fc.Arbitrary<unknown> {
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives !== undefined) {
    const { anyOf: _any, oneOf: _one, ...rest } = schema;
    return fc.oneof(
      ...alternatives.map((branch) => candidates(resolve({ ...rest, ...branch }, document), document)),
    );
  }
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  switch (schema.type) {
    case 'integer':
      return fc.oneof(
        fc.integer({
          min: (schema.minimum as number | undefined) ?? -(2 ** 31),
          max: (schema.maximum as number | undefined) ?? 2 ** 31 - 1,
        }),
        fc.integer({ min: (schema.minimum as number | undefined) ?? -5, max: 5 }),
      );
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'string':
      return stringOf(schema);
    case 'array':
      return fc.array(candidates(resolve(schema.items as Schema, document), document), {
        minLength: (schema.minItems as number | undefined) ?? 0,
        maxLength: (schema.maxItems as number | undefined) ?? 5,
      });
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set((schema.required ?? []) as string[]);
      return fc.record(
        Object.fromEntries(
          Object.entries(properties).map(([name, property]) => [
            name,
            candidates(resolve(property, document), document),
          ]),
        ),
        { requiredKeys: [...required] },
      );
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Values that are not of `schema`'s shape: wrong types, out-of-bounds numbers, strings of any shape. */
export function wrongValues(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.integer(),
    fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
    fc.constantFrom('', ' ', '-1', '1e3', '0x10', 'null', '__proto__', '2026-02-30T00:00:00Z', '42:43'),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
  );
}

/** Follows a `$ref` into the document (local references only: the document has no others). */
export function resolve(schema: Schema, document: object): Schema {
  let current = schema;
  while (typeof current.$ref === 'string') {
    current = current.$ref
      .slice(2)
      .split('/')
      .reduce<Record<string, unknown>>(
        (node, key) => node[key.replace(/~1/g, '/').replace(/~0/g, '~')] as Record<string, unknown>,
        document as Record<string, unknown>,
      );
  }
  return current;
}
