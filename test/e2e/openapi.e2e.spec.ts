import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, TestApp } from './support/test-app';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

describe('the OpenAPI document', () => {
  let subject: TestApp;
  let document: { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

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
    expect(checked).toBe(7);
  });
});
