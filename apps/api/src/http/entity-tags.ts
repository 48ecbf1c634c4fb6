// Entity tags (RFC 9110 8.8.3): a resource's version is its stream revision.

/** A strong ETag naming a resource's version (its stream revision). */
export const etagOf = (revision: number): string => `"${revision}"`;

/** The ETag response header as OpenAPI documents it, for a resource named by `noun` ("user"). */
export const etagHeader = (noun: string) => ({
  description: `The ${noun}'s version; send it as If-Match or If-None-Match.`,
  schema: { type: 'string' },
});

/**
 * If-Match and If-None-Match as RFC 9110 writes them: `*`, or a list of entity-tags. Tags this
 * service never gave simply match nothing (412 for If-Match, 200 for If-None-Match).
 */
export const ENTITY_TAGS_SCHEMA = {
  type: 'string',
  pattern: '^(?:\\*|(?:W/)?"[\\x21\\x23-\\x7e]*"(?:[ \\t]*,[ \\t]*(?:W/)?"[\\x21\\x23-\\x7e]*")*)$',
};

/** The conditional request headers as OpenAPI documents them on a resource's GET and PATCH. */
export const IF_NONE_MATCH_HEADER = {
  name: 'If-None-Match',
  required: false,
  description: 'An ETag held: 304 while it is current',
  schema: ENTITY_TAGS_SCHEMA,
};
export const IF_MATCH_HEADER = {
  name: 'If-Match',
  required: false,
  description: 'The ETag of the version being changed',
  schema: ENTITY_TAGS_SCHEMA,
};

/**
 * The revisions an If-Match (strong comparison) or If-None-Match (weak comparison, RFC 9110
 * 13.1.2: `W/"3"` matches `"3"`) header names: `*` for any, or the list of our tags (tags we never
 * issued match nothing). Undefined without the header.
 */
export function parseEntityTags(
  header: string | undefined,
  comparison: 'strong' | 'weak',
): number[] | '*' | undefined {
  if (header === undefined) return undefined;
  if (header.trim() === '*') return '*';
  // Only the spelling we issue (no leading zero): tags compare character by character (RFC 9110
  // 8.8.3.2), so `"07"` is not `"7"`.
  const tag = comparison === 'strong' ? /^\s*"(0|[1-9]\d{0,14})"\s*$/ : /^\s*(?:W\/)?"(0|[1-9]\d{0,14})"\s*$/;
  return header
    .split(',')
    .map((candidate) => tag.exec(candidate))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => Number(match[1]));
}

/** The revisions If-Match accepts: undefined for `*` or no header (nothing to check). */
export function ifMatchRevisions(header: string | undefined): number[] | undefined {
  const tags = parseEntityTags(header, 'strong');
  return tags === '*' ? undefined : tags;
}

/** Whether If-None-Match names the version `revision` (or `*`): the client's copy is current (304). */
export function heldVersion(header: string | undefined, revision: number): boolean {
  const held = parseEntityTags(header, 'weak');
  return held === '*' || (held?.includes(revision) ?? false);
}
