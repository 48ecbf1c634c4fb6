import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { backendEnv } from './backend';

const ROOT = join(__dirname, '..', '..', '..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI as its own process, from source, on the data directory (and its stores, on the doubles). */
export async function runCliProcess(dataDir: string, ...args: string[]): Promise<CliResult> {
  const stores = await backendEnv(dataDir);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', '@swc-node/register', join(ROOT, 'apps/cli/src/main.ts'), ...args],
      {
        cwd: ROOT,
        env: { ...process.env, DATA_DIR: dataDir, ...stores, SWC_NODE_PROJECT: join(ROOT, 'tsconfig.json') },
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** JSON lines as objects. */
export const jsonLines = (text: string): Array<Record<string, any>> =>
  text
    .trim()
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, any>);
