import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  CLIENT_FIELD_NAMES,
  CUSTOMER_CLIENT_FIELD_NAMES,
  CUSTOMER_FIELD_NAMES,
  NEW_ACCOUNT_FIELDS,
  USER_FIELD_NAMES,
} from '@chronicle/domain';
import { startTestApp, TestApp } from './support/test-app';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

describe('the OpenAPI document', () => {
  let subject: TestApp;
  let document: {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
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
    expect(checked).toBe(13);
  });

  it("takes the user schemas from the one declaration of a user's fields", () => {
    const { UserDto, UserFragmentDto, UserPatchDto } = document.components.schemas;
    expect(Object.keys(UserDto.properties)).toEqual(['id', ...USER_FIELD_NAMES]);
    expect(UserDto.required).toEqual(['id', ...USER_FIELD_NAMES]);
    expect(Object.keys(UserPatchDto.properties)).toEqual(CLIENT_FIELD_NAMES);
    expect(Object.keys(UserFragmentDto.properties)).toEqual([...CLIENT_FIELD_NAMES, 'modifiedon']);
    expect(UserDto.properties.age).toMatchObject({ type: 'integer', minimum: 0, maximum: 150 });
    expect(document.paths['/users/{userId}']).toHaveProperty('get');
    expect(document.paths['/users']).toHaveProperty('get');
  });

  it("takes the customer schemas from the one declaration of a customer's fields", () => {
    const { CustomerDto, NewCustomerDto, CustomerPatchDto } = document.components.schemas;
    expect(Object.keys(CustomerDto.properties)).toEqual(['id', ...CUSTOMER_FIELD_NAMES]);
    expect(Object.keys(NewCustomerDto.properties)).toEqual(CUSTOMER_CLIENT_FIELD_NAMES);
    expect(NewCustomerDto.required).toEqual(CUSTOMER_CLIENT_FIELD_NAMES);
    expect(Object.keys(CustomerPatchDto.properties)).toEqual(CUSTOMER_CLIENT_FIELD_NAMES);
    expect(CustomerPatchDto.required).toBeUndefined();
    expect(NewCustomerDto.properties.name).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 });
    expect(Object.keys(document.paths['/customers'])).toEqual(['get', 'post']);
    expect(Object.keys(document.paths['/customers/{id}'])).toEqual(['get', 'patch']);
  });

  it("takes a new account's schema from the one declaration of what opens an account", () => {
    const { NewAccountDto } = document.components.schemas;
    expect(Object.keys(NewAccountDto.properties).sort()).toEqual(
      [...Object.keys(NEW_ACCOUNT_FIELDS), 'roles'].sort(),
    );
    expect(NewAccountDto.required).toEqual(Object.keys(NEW_ACCOUNT_FIELDS));
    expect(NewAccountDto.properties.age).toMatchObject({ type: 'integer', minimum: 0, maximum: 150 });
    expect(Object.keys(document.paths['/api/v1/accounts'])).toEqual(['post']);
  });
});
