/** The client's address as Fastify sees it (`trustProxy` decides whether X-Forwarded-For counts). */
export function clientAddress(request: { ip?: unknown }): string {
  return typeof request.ip === 'string' ? request.ip : 'unknown';
}
