import { join } from 'node:path';

/**
 * The apps (apps/api, apps/projector) and the CLI as child processes run from the build in dist/,
 * which jest's global set-up (test/support/build-if-stale.ts) first brings up to date with the
 * sources. From source, each of the some hundreds of processes a run starts compiled the
 * TypeScript it loads: about 0.4 s of CPU per process on two busy cores.
 */

const ROOT = join(__dirname, '..', '..');

export type BuiltApp = 'api' | 'projector' | 'cli';

/**
 * Node's arguments for an app's built entry point after `nodeOptions`, with the TypeScript loader
 * first when one of them is a TypeScript preload (it then compiles what it loads from dist/ too).
 */
export function builtCommand(app: BuiltApp, nodeOptions: readonly string[] = []): string[] {
  const typescript = nodeOptions.some((option) => option.endsWith('.ts'));
  return [
    ...(typescript ? ['-r', '@swc-node/register'] : []),
    ...nodeOptions,
    join(ROOT, 'dist', 'apps', app, 'src', 'main.js'),
  ];
}

/**
 * A module of the build (`libs/...` or `apps/...`, as in the sources), for a preload that patches
 * what the built process runs; typed by its source: `builtModule<typeof import('<source>')>(path)`.
 */
export function builtModule<T>(path: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(join(ROOT, 'dist', path)) as T;
}
