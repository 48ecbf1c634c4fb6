import { isUtf8 } from 'node:buffer';

/**
 * The one reading of a request's credentials (RFC 7617 Basic, RFC 6750 Bearer): every other part
 * of the service (the guard, the strategies, the response headers) asks this module, and the
 * reading is made once per request.
 */
export type Credentials =
  | { kind: 'none' }
  /** More than one way of sending credentials, or one sent twice: RFC 6750 §2, a 400. */
  | { kind: 'several' }
  /** An Authorization scheme other than Bearer and Basic. */
  | { kind: 'unsupported' }
  /** A Basic header that does not decode to `user-id:password` in UTF-8. */
  | { kind: 'malformed-basic' }
  | { kind: 'bearer'; token: string }
  | { kind: 'basic'; email: string; password: string };

export interface RequestLike {
  query?: unknown;
  raw: { rawHeaders: string[] };
}

/** The query parameter that carries a token (RFC 6750 §2.3), after percent-decoding. */
export const QUERY_TOKEN_PARAMETER = 'access_token';

const PARSED = Symbol('chronicle.credentials');
type Memo = { [PARSED]?: Credentials };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The request's credentials, read on first use and kept on the request. */
export function credentialsOf(request: RequestLike): Credentials {
  const memo = request as Memo;
  return (memo[PARSED] ??= read(request));
}

function read(request: RequestLike): Credentials {
  // Node joins repeated headers or keeps only the first: count Authorization in the raw list.
  let authorization: string | undefined;
  let count = 0;
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 13 && name.toLowerCase() === 'authorization') {
      authorization = raw[i + 1];
      count++;
    }
  }
  let queryToken: unknown;
  const query = request.query as Record<string, unknown> | null | undefined;
  if (query != null && Object.prototype.hasOwnProperty.call(query, QUERY_TOKEN_PARAMETER)) {
    queryToken = query[QUERY_TOKEN_PARAMETER];
    // A repeated parameter arrives as a list: each value is one more credential.
    count += Array.isArray(queryToken) ? queryToken.length : 1;
  }
  if (count === 0) return { kind: 'none' };
  if (count > 1) return { kind: 'several' };
  if (authorization === undefined) return { kind: 'bearer', token: String(queryToken) };
  return fromAuthorization(authorization.trim());
}

function fromAuthorization(header: string): Credentials {
  const space = header.indexOf(' ');
  const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
  const value = space < 0 ? '' : header.slice(space + 1).trimStart();
  if (scheme === 'bearer') return { kind: 'bearer', token: value };
  if (scheme !== 'basic') return { kind: 'unsupported' };
  if (!BASE64.test(value)) return { kind: 'malformed-basic' };
  const bytes = Buffer.from(value, 'base64');
  if (!isUtf8(bytes)) return { kind: 'malformed-basic' };
  const decoded = bytes.toString('utf8');
  // RFC 7617 §2: the user-id cannot contain a colon, so the first one ends it; the password is
  // all the rest, colons included.
  const colon = decoded.indexOf(':');
  if (colon <= 0) return { kind: 'malformed-basic' };
  return { kind: 'basic', email: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
