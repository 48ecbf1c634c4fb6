import { ClientFields, UserRepresentation, userRepresentation } from '@chronicle/domain';
import { RepresentationOffers } from '../http/representation-offers';

export const USER_MEDIA_TYPE = 'application/vnd.chronicle.user+json';
export const FRAGMENT_MEDIA_TYPE = 'application/vnd.chronicle.fragment+json';

export type Representation = 'user' | 'fragment';

/** PATCH answers the full user or the fragment; application/json is the full user. */
export const PATCH_REPRESENTATIONS = new RepresentationOffers<Representation>([
  [USER_MEDIA_TYPE, 'user'],
  [FRAGMENT_MEDIA_TYPE, 'fragment'],
  ['application/json', 'user'],
]);

/** GET answers the full user only: a fragment of nothing patched means nothing. */
export const GET_REPRESENTATIONS = new RepresentationOffers<Representation>([
  [USER_MEDIA_TYPE, 'user'],
  ['application/json', 'user'],
]);

export const mediaTypeOf = (representation: Representation): string =>
  representation === 'user' ? USER_MEDIA_TYPE : FRAGMENT_MEDIA_TYPE;

/** The body of a representation, as bytes: Fastify then sends the media type exactly as negotiated. */
export function representationBody(
  representation: Representation,
  user: UserRepresentation,
  patched: Partial<ClientFields> = {},
): Buffer {
  const body =
    representation === 'user' ? userRepresentation(user) : { ...patched, modifiedon: user.modifiedon };
  return Buffer.from(JSON.stringify(body));
}

/** A strong ETag naming the user's version (its stream revision). */
export const etagOf = (revision: number): string => `"${revision}"`;

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
