import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { DataSubject } from '@chronicle/event-store';

const repoRoot = resolve(__dirname, '../../..');

/** Runs support/data-key-worker.ts in a separate Node process; `onLine` hears each line it prints. */
export function spawnDataKeyWorker(
  order: { dataDir: string; secret: Buffer; mode: 'create' | 'destroy'; subjects: DataSubject[] },
  onLine: (line: string, child: ChildProcessWithoutNullStreams) => void,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const child = spawn(
    process.execPath,
    [
      '-r',
      '@swc-node/register',
      join(__dirname, 'data-key-worker.ts'),
      JSON.stringify({ ...order, secret: order.secret.toString('hex') }),
    ],
    { cwd: repoRoot, env: { ...process.env, SWC_NODE_PROJECT: join(repoRoot, 'tsconfig.json') } },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  createInterface({ input: child.stdout }).on('line', (line) => onLine(line, child));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}
