import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AS_OF_PATTERN, MAX_AUDIT_LIMIT, RESET_TOKEN_PATTERN, RFC_3339 } from '@chronicle/application';
import {
  CLIENT_FIELD_NAMES,
  CUSTOMER_CLIENT_FIELD_NAMES,
  CUSTOMER_FIELD_NAMES,
  EMAIL_MAX_LENGTH,
  NEW_ACCOUNT_FIELDS,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  USER_FIELD_NAMES,
} from '@chronicle/domain';
import { POSITION_PATTERN } from '@chronicle/event-store';
import { ENTITY_TAGS_SCHEMA } from '../../apps/api/src/http/entity-tags';
import { startTestApp, TestApp } from './support/test-app';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

describe('the OpenAPI document', () => {
  let subject: TestApp;
  let document: {
    paths: Record<
      string,
      Record<
        string,
        {
          responses: Record<string, unknown>;
          parameters?: { name: string; schema: Record<string, unknown> }[];
          requestBody: { content: Record<string, { schema: unknown }> };
        }
      >
    >;
    components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> };
  };

  beforeAll(async () => {
    subject = await startTestApp();
    document = (await (await fetch(`${subject.url}/docs/json`)).json()) as typeof document;
  });
  afterAll(() => subject.destroy());

  it('passes Redocly lint (recommended rules, redocly.yaml) with no error and no warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chronicle-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(document));
      const cli = require.resolve('@redocly/cli/bin/cli.js');
      const lint = await run(
        process.execPath,
        [cli, 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json'],
        {
          cwd: ROOT,
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        },
      ).catch((error: { stdout: string }) => error);
      const report = JSON.parse(lint.stdout) as {
        totals: { errors: number; warnings: number };
        problems: unknown[];
      };
      expect(report.problems).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('declares problem details for the errors of every operation that takes credentials', () => {
    let checked = 0;
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (path.startsWith('/health')) continue;
        expect({ [`${method} ${path}`]: Object.keys(operation.responses) }).toEqual({
          [`${method} ${path}`]: expect.arrayContaining(['400', '401', 'default']),
        });
        checked++;
      }
    }
    expect(checked).toBe(18);
  });

  it("takes the user schemas from the one declaration of a user's fields", () => {
    const { UserDto, UserFragmentDto } = document.components.schemas;
    expect(Object.keys(UserDto.properties)).toEqual(['id', ...USER_FIELD_NAMES]);
    expect(UserDto.required).toEqual(['id', ...USER_FIELD_NAMES]);
    const patch = document.paths['/users/{userId}'].patch.requestBody.content['application/merge-patch+json']
      .schema as { properties: Record<string, unknown>; additionalProperties: boolean };
    expect(Object.keys(patch.properties)).toEqual(CLIENT_FIELD_NAMES);
    expect(patch.additionalProperties).toBe(false);
    expect(Object.keys(UserFragmentDto.properties)).toEqual([...CLIENT_FIELD_NAMES, 'modifiedon']);
    expect(UserDto.properties.age).toMatchObject({ type: 'integer', minimum: 0, maximum: 150 });
    expect(document.paths['/users/{userId}']).toHaveProperty('get');
    expect(document.paths['/users']).toHaveProperty('get');
  });

  /** An operation's parameter schemas, by name. */
  const parameters = (path: string, method: string) =>
    Object.fromEntries(
      (document.paths[path][method].parameters ?? []).map((parameter) => [parameter.name, parameter.schema]),
    );
  /** The problem types an operation declares under a status, from the examples it gives. */
  const refusals = (path: string, method: string, status: number) =>
    Object.keys(
      (
        document.paths[path][method].responses[String(status)] as {
          content: Record<string, { examples?: Record<string, { value: { type: string; status: number } }> }>;
        }
      ).content['application/problem+json'].examples ?? {},
    );

  it('states the rules of asOf and of the audit filters that the service enforces', () => {
    const user = parameters('/users/{userId}', 'get');
    expect(user.userId).toEqual({ type: 'string', format: 'uuid' });
    expect(user.asOf).toMatchObject({
      type: 'string',
      pattern: AS_OF_PATTERN.source,
      anyOf: [
        { type: 'string', format: 'date-time' },
        { type: 'string', pattern: `^(?:${POSITION_PATTERN})$` },
      ],
    });
    const audit = parameters('/api/v1/audit/events', 'get');
    for (const name of ['since', 'until'])
      expect(audit[name]).toEqual({ type: 'string', format: 'date-time', pattern: RFC_3339.source });
    expect(audit.after).toEqual({ type: 'string', pattern: `^(?:${POSITION_PATTERN})$` });
    expect(audit.limit).toEqual({ type: 'integer', minimum: 1, maximum: MAX_AUDIT_LIMIT });
    expect(JSON.stringify(audit.type)).toContain('maxItems');
  });

  it('states each password form exactly: its members, their formats and bounds, nothing else', () => {
    const { oneOf } = document.paths['/api/v1/account/password'].put.requestBody.content['application/json']
      .schema as { oneOf: { properties: Record<string, unknown>; additionalProperties: boolean }[] };
    expect(oneOf.map((form) => form.additionalProperties)).toEqual([false, false, false]);
    const [request, completion, change] = oneOf.map((form) => form.properties);
    expect(request.email).toMatchObject({ type: 'string', format: 'email', maxLength: EMAIL_MAX_LENGTH });
    expect(completion.token).toMatchObject({ type: 'string', pattern: RESET_TOKEN_PATTERN.source });
    for (const form of [completion, change]) {
      expect(form.new).toMatchObject({
        type: 'string',
        minLength: PASSWORD_MIN_LENGTH,
        maxLength: PASSWORD_MAX_LENGTH,
      });
    }
  });

  it('declares the refusals no schema can state, each with its problem type and an example', () => {
    expect(refusals('/api/v1/account/password', 'put', 400)).toEqual([
      'invalid-reset-token',
      'wrong-password',
    ]);
    expect(refusals('/api/v1/account/password', 'put', 422)).toEqual([
      'common-password',
      'password-is-email',
    ]);
    expect(refusals('/users/{userId}', 'get', 404)).toEqual(['not-found']);
    expect(refusals('/users/{userId}', 'get', 400)).toEqual(['invalid-position']);
    expect(refusals('/api/v1/audit/events', 'get', 400)).toEqual(['invalid-position']);
    const example = (
      document.paths['/api/v1/account/password'].put.responses['400'] as {
        content: Record<string, { examples: Record<string, { value: unknown }> }>;
      }
    ).content['application/problem+json'].examples['invalid-reset-token'].value;
    expect(example).toMatchObject({ type: 'invalid-reset-token', status: 400, title: 'Bad Request' });
  });

  /** An operation's JSON body schema. */
  const bodySchema = (path: string, method: string, mediaType = 'application/json') =>
    document.paths[path][method].requestBody.content[mediaType].schema as {
      properties: Record<string, unknown>;
      required?: string[];
      additionalProperties: boolean;
    };

  it("takes the customer schemas from the one declaration of a customer's fields", () => {
    const { CustomerDto } = document.components.schemas;
    const created = bodySchema('/customers', 'post');
    const patch = bodySchema('/customers/{id}', 'patch', 'application/merge-patch+json');
    expect(Object.keys(CustomerDto.properties)).toEqual(['id', ...CUSTOMER_FIELD_NAMES]);
    expect(Object.keys(created.properties)).toEqual(CUSTOMER_CLIENT_FIELD_NAMES);
    expect(created.required).toEqual(CUSTOMER_CLIENT_FIELD_NAMES);
    expect(created.additionalProperties).toBe(false);
    expect(Object.keys(patch.properties)).toEqual(CUSTOMER_CLIENT_FIELD_NAMES);
    expect(patch.required).toBeUndefined();
    expect(patch.additionalProperties).toBe(false);
    expect(created.properties.name).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 });
    expect(Object.keys(document.paths['/customers'])).toEqual(['get', 'post']);
    expect(Object.keys(document.paths['/customers/{id}'])).toEqual(['get', 'delete', 'patch']);
  });

  it("states the customer routes' path and entity-tag parameters as the service takes them", () => {
    const read = parameters('/customers/{id}', 'get');
    const change = parameters('/customers/{id}', 'patch');
    // The service takes 1 to 15 digits without a leading zero.
    for (const given of [read, change])
      expect(given.id).toEqual({ type: 'integer', minimum: 1, maximum: 1e15 - 1 });
    expect(read['If-None-Match']).toEqual(ENTITY_TAGS_SCHEMA);
    expect(change['If-Match']).toEqual(ENTITY_TAGS_SCHEMA);
  });

  it("takes a new account's schema from the one declaration of what opens an account", () => {
    const account = bodySchema('/api/v1/accounts', 'post');
    expect(Object.keys(account.properties).sort()).toEqual(
      [...Object.keys(NEW_ACCOUNT_FIELDS), 'roles'].sort(),
    );
    expect(account.required).toEqual(Object.keys(NEW_ACCOUNT_FIELDS));
    expect(account.additionalProperties).toBe(false);
    expect(account.properties.age).toMatchObject({ type: 'integer', minimum: 0, maximum: 150 });
    expect(Object.keys(document.paths['/api/v1/accounts'])).toEqual(['post']);
  });

  it('declares on every POST and PATCH the refusals its Idempotency-Key may bring, beside its own', () => {
    const writes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods)
        .filter((method) => method === 'post' || method === 'patch')
        .map((method) => [path, method]),
    );
    expect(writes.length).toBeGreaterThan(4);
    for (const [path, method] of writes) {
      expect({ path, method, refusals: refusals(path, method, 409) }).toEqual({
        path,
        method,
        refusals: expect.arrayContaining(['idempotency-key-in-flight', 'idempotency-key-answer-lost']),
      });
      expect({ path, method, refusals: refusals(path, method, 422) }).toEqual({
        path,
        method,
        refusals: expect.arrayContaining(['idempotency-key-reused']),
      });
    }
    expect(refusals('/customers/{id}', 'patch', 409)).toEqual([
      'conflict',
      'idempotency-key-in-flight',
      'idempotency-key-answer-lost',
    ]);
    expect(refusals('/api/v1/accounts', 'post', 409)).toEqual([
      'email-taken',
      'idempotency-key-in-flight',
      'idempotency-key-answer-lost',
    ]);
  });

  it('declares the semantic refusals of the customer and account routes', () => {
    expect(refusals('/customers/{id}', 'get', 404)).toEqual(['not-found']);
    expect(refusals('/customers/{id}', 'patch', 404)).toEqual(['not-found']);
    expect(refusals('/customers/{id}', 'patch', 412)).toEqual(['precondition-failed']);
    expect(refusals('/api/v1/audit/verify', 'get', 400)).toEqual(['invalid-parameters']);
  });

  it('declares the exports of personal data: their document, download header and refusals', () => {
    const exports = [
      ['/users/{userId}/export', 'UserExportDto'],
      ['/customers/{id}/export', 'CustomerExportDto'],
    ] as const;
    for (const [path, schema] of exports) {
      const { responses } = document.paths[path].get;
      expect(Object.keys(responses)).toEqual(
        expect.arrayContaining(['200', '400', '401', '403', '404', '406', 'default']),
      );
      expect(refusals(path, 'get', 404)).toEqual(['not-found']);
      const ok = responses['200'] as { content: Record<string, unknown>; headers: Record<string, unknown> };
      expect(ok.content).toEqual({
        'application/json': { schema: { $ref: `#/components/schemas/${schema}` } },
      });
      expect(ok.headers).toHaveProperty('Content-Disposition');
    }
    const { UserExportDto, CustomerExportDto } = document.components.schemas;
    expect(Object.keys(UserExportDto.properties)).toEqual([
      'subject',
      'exportedAt',
      'accountId',
      'personalData',
      'sessions',
      'emails',
      'audit',
      'omitted',
    ]);
    expect(UserExportDto.required).toEqual(Object.keys(UserExportDto.properties));
    expect(Object.keys(CustomerExportDto.properties)).toEqual([
      'subject',
      'exportedAt',
      'personalData',
      'audit',
    ]);
    expect(CustomerExportDto.required).toEqual(Object.keys(CustomerExportDto.properties));
  });
});
