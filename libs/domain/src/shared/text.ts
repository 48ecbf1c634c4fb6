/**
 * Characters that steer a terminal or reorder how a line reads: C0 controls, DEL, C1 controls
 * (U+009B is a CSI, like ESC [), the line and paragraph separators, and the bidirectional marks,
 * embeddings, overrides and isolates (U+202E turns the rest of a line around).
 */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/**
 * `text` with every unsafe character written as a `\uXXXX` escape, for people's screens (logs, the
 * CLI). Inside a JSON text (outside its strings none can occur) this is the same value, escaped.
 */
export function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Control and bidirectional formatting characters: nothing a name should hold. */
export const CONTROL_CHARACTERS = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

/** A letter, digit, punctuation or symbol: something a reader sees. */
export const VISIBLE_CHARACTER = /[\p{L}\p{N}\p{P}\p{S}]/u;
