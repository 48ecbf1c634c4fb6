/**
 * A position in the global log ($all). EventStoreDB names a record by a commit/prepare pair;
 * the embedded store uses one sequence number for both.
 */
export interface Position {
  readonly commit: bigint;
  readonly prepare: bigint;
}

export function position(commit: bigint | number, prepare: bigint | number = commit): Position {
  return { commit: BigInt(commit), prepare: BigInt(prepare) };
}

export function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

/** `"42"` when commit and prepare agree, else `"42:40"`: what clients see and send back. */
export function formatPosition(p: Position): string {
  return p.commit === p.prepare ? `${p.commit}` : `${p.commit}:${p.prepare}`;
}

export function parsePosition(text: string): Position | null {
  const match = /^(\d{1,20})(?::(\d{1,20}))?$/.exec(text);
  if (!match) return null;
  const commit = BigInt(match[1]);
  const prepare = match[2] === undefined ? commit : BigInt(match[2]);
  return { commit, prepare };
}

/** Fixed-width text that sorts like the position: for stores that compare strings (MongoDB guards). */
export function positionKey(p: Position): string {
  return `${p.commit.toString().padStart(20, '0')}:${p.prepare.toString().padStart(20, '0')}`;
}
