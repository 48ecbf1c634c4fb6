/**
 * A second process appending to an embedded store: prints `ready` once the store is open, starts
 * on a `go` line on stdin, and prints `{"ids": [...]}` (the events it wrote) when done.
 * Usage: node -r @swc-node/register append-worker.ts '<{"dataDir", "load"} as JSON>'
 */
import { SqliteEventStore } from '@chronicle/event-store';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { type AppendLoad, runAppendLoad } from './append-load';

async function main(): Promise<void> {
  const { dataDir, load } = JSON.parse(process.argv[2]) as { dataDir: string; load: AppendLoad };
  const store = SqliteEventStore.open(dataDir);
  const lines = createInterface({ input: process.stdin });
  process.stdout.write('ready\n');
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  if (line !== 'go') throw new Error(`expected "go", got ${JSON.stringify(line)}`);
  const ids = await runAppendLoad(store, load);
  await store.close();
  process.stdout.write(`${JSON.stringify({ ids })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
