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

/**
 * EventStoreDB keeps positions as signed 64-bit integers: nothing at or above 2^63 names a record.
 * Servers 24.2 to 24.10.4 nonetheless send a checkpoint of (2^64-1, 2^64-1), "before the log".
 */
export const POSITION_LIMIT = 2n ** 63n;

/**
 * Why `p` cannot name a record of any log, or null when it can. A server given such a position
 * fails the call rather than answering it, so it is refused before it is sent.
 */
export function positionProblem(p: Position): string | null {
  if (p.commit < 0n || p.prepare < 0n) return 'negative';
  if (p.commit >= POSITION_LIMIT || p.prepare >= POSITION_LIMIT) return 'at or above 2^63';
  if (p.commit < p.prepare) return 'commit before prepare';
  return null;
}

/**
 * A number below `limit` in decimal, leading zeros allowed, at most 20 digits (what parsePosition
 * reads): one alternative per digit of limit - 1 below which the number's digit falls.
 */
function belowPattern(limit: bigint): string {
  const max = (limit - 1n).toString();
  const alternatives = [`\\d{1,${max.length - 1}}`, max];
  for (let i = 0; i < max.length; i++) {
    const digit = Number(max[i]);
    if (digit === 0) continue;
    const rest = max.length - i - 1;
    alternatives.push(`${max.slice(0, i)}[0-${digit - 1}]${rest > 0 ? `\\d{${rest}}` : ''}`);
  }
  return `(?=\\d{1,20}(?::|$))0*(?:${alternatives.join('|')})`;
}

/**
 * The shape of every position parsePosition can accept, as a JSON-schema pattern: one or two
 * numbers below 2^63. Whether the prepare comes before the commit, and whether a record starts
 * there, no pattern can say.
 */
export const POSITION_PATTERN = `${belowPattern(POSITION_LIMIT)}(?::${belowPattern(POSITION_LIMIT)})?`;

/** A position a client sent (`42` or `42:40`), or null when it is malformed or names nothing. */
export function parsePosition(text: string): Position | null {
  const match = /^(\d{1,20})(?::(\d{1,20}))?$/.exec(text);
  if (!match) return null;
  const commit = BigInt(match[1]);
  const prepare = match[2] === undefined ? commit : BigInt(match[2]);
  const parsed = { commit, prepare };
  return positionProblem(parsed) === null ? parsed : null;
}

/** Fixed-width text that sorts like the position: for stores that compare strings (MongoDB guards). */
export function positionKey(p: Position): string {
  return `${p.commit.toString().padStart(20, '0')}:${p.prepare.toString().padStart(20, '0')}`;
}
