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
