import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

/** The packages a fresh process has loaded after requiring `entry` (the API's static module graph). */
function packagesLoadedBy(entry: string): string[] {
  const script = `require('reflect-metadata'); require(${JSON.stringify(entry)});
    process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  const files: string[] = JSON.parse(
    execFileSync(process.execPath, ['-r', '@swc-node/register', '-e', script], {
      cwd: ROOT,
      env: { ...process.env, SWC_NODE_PROJECT: join(ROOT, 'tsconfig.json') },
      encoding: 'utf8',
    }),
  );
  const names = files.map((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1]);
  return [...new Set(names.filter((name): name is string => name !== undefined))];
}

describe('the API module graph', () => {
  // One fresh process for both checks: it takes seconds to load the graph from source.
  let loaded: string[];
  beforeAll(() => {
    loaded = packagesLoadedBy('./apps/api/src/create-app');
  });

  // The servers' client libraries are a sixth of the start-up: the adapters load them when configured.
  it('loads no client library of a server before one is configured', () => {
    expect(loaded).toEqual(expect.arrayContaining(['@nestjs/core', 'better-sqlite3']));
    expect(
      loaded.filter((name) => ['mongodb', '@eventstore/db-client', '@grpc/grpc-js'].includes(name)),
    ).toEqual([]);
  });

  // Decompressed as it loads (7 MiB): the common passwords are read when a password is first checked.
  it('loads no password dictionary before a password is checked', () => {
    expect(loaded).not.toContain('@zxcvbn-ts/language-common');
  });
});
