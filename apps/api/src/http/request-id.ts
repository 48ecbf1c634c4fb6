import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The client's X-Request-Id when it is safe to echo and log, else a new UUID. Stored on the raw
 * request too, so the HTTP logger uses the same id.
 */
export function requestIdFor(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  const id = typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
  request.id = id;
  return id;
}
