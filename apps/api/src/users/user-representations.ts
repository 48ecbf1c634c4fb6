import Negotiator from 'negotiator';
import { User } from '@chronicle/domain';

export const USER_MEDIA_TYPE = 'application/vnd.chronicle.user+json';
export const FRAGMENT_MEDIA_TYPE = 'application/vnd.chronicle.fragment+json';

export type Representation = 'user' | 'fragment';

// Offered in this order, so that ties (any type, application/ wildcard, no Accept) go to the full user.
const OFFERS: [string, Representation][] = [
  [USER_MEDIA_TYPE, 'user'],
  [FRAGMENT_MEDIA_TYPE, 'fragment'],
  ['application/json', 'user'],
];

export const SUPPORTED_MEDIA_TYPES = OFFERS.map(([type]) => type);

/** RFC 9110 proactive negotiation (q-values, wildcards, specificity); null when nothing fits. */
export function negotiateUserRepresentation(accept: string | undefined): Representation | null {
  const chosen = new Negotiator({ headers: { accept } }).mediaType(SUPPORTED_MEDIA_TYPES);
  return OFFERS.find(([type]) => type === chosen)?.[1] ?? null;
}

export const mediaTypeOf = (representation: Representation): string =>
  representation === 'user' ? USER_MEDIA_TYPE : FRAGMENT_MEDIA_TYPE;

export function fullUser(user: User) {
  return {
    id: user.id,
    name: user.name,
    age: user.age,
    createdon: user.createdon,
    modifiedon: user.modifiedon,
  };
}

/** Only the members the patch named, with their stored values, plus modifiedon. */
export function userFragment(user: User, patched: { name?: string; age?: number }) {
  return { ...patched, modifiedon: user.modifiedon };
}

/** A strong ETag naming the user's version (its stream revision). */
export const etagOf = (revision: number): string => `"${revision}"`;

/**
 * The revisions an If-Match header accepts: undefined for `*` or no header, else the list of our
 * strong tags (tags we never issued match nothing, giving an empty list and so a 412).
 */
export function parseIfMatch(header: string | undefined): number[] | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  return header
    .split(',')
    .map((tag) => /^\s*"(\d{1,15})"\s*$/.exec(tag))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => Number(match[1]));
}
