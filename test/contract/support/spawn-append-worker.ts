import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import type { AppendLoad } from './append-load';

const repoRoot = resolve(__dirname, '../../..');

export interface AppendWorker {
  /** Resolves once the child has opened the store. */
  ready: Promise<void>;
  /** Tells the child to start appending. */
  go(): void;
  /** The ids the child wrote; rejects if it fails. */
  result: Promise<string[]>;
}

/** Runs support/append-worker.ts in a separate Node process on the same data directory. */
export function spawnAppendWorker(dataDir: string, load: AppendLoad): AppendWorker {
  const child = spawn(
    process.execPath,
    ['-r', '@swc-node/register', join(__dirname, 'append-worker.ts'), JSON.stringify({ dataDir, load })],
    {
      cwd: repoRoot,
      env: { ...process.env, SWC_NODE_PROJECT: join(repoRoot, 'tsconfig.json') },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  let ids: string[] | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line === 'ready') markReady();
    else ids = (JSON.parse(line) as { ids: string[] }).ids;
  });
  const result = new Promise<string[]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0 && ids) resolve(ids);
      else reject(new Error(`append worker exited with ${code}: ${stderr}`));
    });
  });
  return {
    ready: Promise.race([ready, result.then(() => undefined)]),
    go: () => child.stdin.end('go\n'),
    result,
  };
}
