/** The ways a request can carry credentials; more than one at once is refused (RFC 6750 §2). */
export interface PresentedCredentials {
  count: number;
  bearer: boolean;
  basic: boolean;
}

interface RequestLike {
  headers: Record<string, string | string[] | undefined>;
  query?: unknown;
  raw: { rawHeaders: string[] };
}

export function presentedCredentials(request: RequestLike): PresentedCredentials {
  // Node keeps only the first of repeated Authorization headers: count them in the raw list.
  const authorization: string[] = [];
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toLowerCase() === 'authorization') authorization.push(raw[i + 1]);
  }
  const query = (request.query ?? {}) as Record<string, unknown>;
  const queryToken = Object.prototype.hasOwnProperty.call(query, 'access_token');
  const scheme = (value: string) => value.trim().split(/\s+/, 1)[0].toLowerCase();
  return {
    count: authorization.length + (queryToken ? 1 : 0),
    bearer: queryToken || authorization.some((value) => scheme(value) === 'bearer'),
    basic: authorization.some((value) => scheme(value) === 'basic'),
  };
}
