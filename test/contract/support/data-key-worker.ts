/**
 * A second process on an embedded data key store. `create`: prints `ready` once the store is open,
 * and on a `go` line on stdin makes the subjects' keys and prints them (`{"keys": [hex...]}`). `destroy`: erases the subjects one by one, printing each one's name
 * once its destroy has returned, then waits to be killed.
 * Usage: node -r @swc-node/register data-key-worker.ts '<{"dataDir", "secret", "mode", "subjects"} as JSON>'
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { type DataSubject, SqliteDataKeyStore, subjectName } from '@chronicle/event-store';

interface Order {
  dataDir: string;
  /** hex */
  secret: string;
  mode: 'create' | 'destroy';
  subjects: DataSubject[];
}

async function main(): Promise<void> {
  const { dataDir, secret, mode, subjects } = JSON.parse(process.argv[2]) as Order;
  const store = new SqliteDataKeyStore(dataDir, Buffer.from(secret, 'hex'));
  if (mode === 'create') {
    await store.getMany([]);
    const lines = createInterface({ input: process.stdin });
    process.stdout.write('ready\n');
    const [line] = (await once(lines, 'line')) as [string];
    lines.close();
    if (line !== 'go') throw new Error(`expected "go", got ${JSON.stringify(line)}`);
    const keys: string[] = [];
    for (const subject of subjects) keys.push((await store.create(subject)).toString('hex'));
    await store.close();
    process.stdout.write(`${JSON.stringify({ keys })}\n`);
    return;
  }
  for (const subject of subjects) {
    await store.destroy({ subject, erasedAt: new Date().toISOString() });
    process.stdout.write(`${subjectName(subject)}\n`);
  }
  setInterval(() => undefined, 60_000);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
