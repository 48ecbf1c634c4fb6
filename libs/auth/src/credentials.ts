/** The ways a request can carry credentials; more than one at once is refused (RFC 6750 §2). */
export interface PresentedCredentials {
  count: number;
  bearer: boolean;
  basic: boolean;
}

export interface RequestLike {
  headers: Record<string, string | string[] | undefined>;
  query?: unknown;
  raw: { rawHeaders: string[] };
}

export function presentedCredentials(request: RequestLike): PresentedCredentials {
  // Node keeps only the first of repeated Authorization headers: count them in the raw list.
  const schemes: string[] = [];
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    // Every request passes here: lower-case only the names that can match.
    if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization') {
      schemes.push(raw[i + 1].trim().split(/\s+/, 1)[0].toLowerCase());
    }
  }
  const query = (request.query ?? {}) as Record<string, unknown>;
  const queryToken = Object.prototype.hasOwnProperty.call(query, 'access_token');
  return {
    count: schemes.length + (queryToken ? 1 : 0),
    bearer: queryToken || schemes.includes('bearer'),
    basic: schemes.includes('basic'),
  };
}

/** One credential as passport's strategies would read it. */
export type SingleCredential =
  { scheme: 'bearer'; token: string } | { scheme: 'basic'; email: string; password: string };

/**
 * The request's only credential, parsed exactly as passport-http-bearer and passport-http parse
 * it; null for none, several, or anything unusual, which the guard then judges and explains.
 */
export function singleCredential(request: RequestLike): SingleCredential | null {
  if (presentedCredentials(request).count !== 1) return null;
  const queryToken = (request.query as Record<string, unknown> | undefined)?.access_token;
  if (typeof queryToken === 'string' && queryToken !== '') return { scheme: 'bearer', token: queryToken };
  const authorization = request.headers.authorization;
  if (typeof authorization !== 'string') return null;
  const parts = authorization.split(' ');
  if (parts.length !== 2) return null;
  if (/^Bearer$/i.test(parts[0]) && parts[1] !== '') return { scheme: 'bearer', token: parts[1] };
  if (!/^Basic$/i.test(parts[0])) return null;
  const [email, password] = Buffer.from(parts[1], 'base64').toString().split(':');
  return email && password ? { scheme: 'basic', email, password } : null;
}
