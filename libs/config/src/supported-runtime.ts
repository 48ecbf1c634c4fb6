/**
 * The Node.js lines Chronicle is tested on. The embedded store's driver (better-sqlite3 13, a
 * Node-API addon) needs 22 or later: on 20 it dies with a segmentation fault at the first query, so
 * an older runtime is refused before anything opens the store, in words instead of a crash.
 */
export const SUPPORTED_NODE_LINES = [22, 24] as const;

/** Why `version` (process.versions.node) cannot run Chronicle, or null when it can. */
export function unsupportedRuntime(version: string): string | null {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (major >= SUPPORTED_NODE_LINES[0]) return null;
  return (
    `Chronicle runs on Node.js ${SUPPORTED_NODE_LINES.join(' or ')}, not ${version}: ` +
    'start it through npm (npm start, npm run cli), which runs the Node.js 24 that npm ci installs, ' +
    'or install Node.js 24'
  );
}
