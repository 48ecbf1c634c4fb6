import type { Client } from 'openapi-fetch';
// Generated from the served document by openapi-typescript in generated-client.e2e.spec.ts, which
// type-checks this file against it; what the repository holds in its place types nothing.
import type { paths } from './chronicle-api';

export interface WalkThroughAccount {
  email: string;
  password: string;
  userId: string;
}

const basic = ({ email, password }: { email: string; password: string }) =>
  `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`;

const MERGE_PATCH = 'application/merge-patch+json';
const FRAGMENT = 'application/vnd.chronicle.fragment+json';

/**
 * The README's walk-through (token, customers, a patch in both representations, users, a reset
 * and a change of password) through a client generated from the document. `resetTokenFor` reads
 * the token from the reset e-mail sent to an address. Seeded: 250 customers.
 */
export async function readmeWalkThrough(
  client: Client<paths>,
  admin: WalkThroughAccount,
  resetTokenFor: (email: string) => Promise<string>,
): Promise<void> {
  // Basic credentials for a bearer token.
  const issued = await client.POST('/api/v1/account/tokens', { headers: { authorization: basic(admin) } });
  expect(issued.response.status).toBe(201);
  expect(issued.data?.token_type).toBe('Bearer');
  const bearer = { authorization: `Bearer ${issued.data!.access_token}` };

  // Customers: pages from 1, exclusive gt/lt, Link and X-Total-Count.
  const page = await client.GET('/customers', {
    params: { query: { gt: 10, lt: 50, maxpagesize: 5, page: 2 } },
    headers: bearer,
  });
  expect(page.response.status).toBe(200);
  expect(page.data).toMatchObject([16, 17, 18, 19, 20].map((id) => ({ id })));
  expect(page.data).toHaveLength(5);
  expect(page.response.headers.get('x-total-count')).toBe('39');
  expect(page.response.headers.get('link')).toContain('rel="next"');
  const byBasic = await client.GET('/customers', {
    params: { query: { maxpagesize: 3 } },
    headers: { authorization: basic(admin) },
  });
  expect(byBasic.data).toHaveLength(3);

  // A merge patch answered as the full user, then as the fragment of what changed.
  const full = await client.PATCH('/users/{userId}', {
    params: { path: { userId: admin.userId } },
    body: { name: 'Ada', age: 36 },
    headers: { ...bearer, 'content-type': MERGE_PATCH },
  });
  expect(full.response.status).toBe(200);
  expect(full.data).toMatchObject({ id: admin.userId, name: 'Ada', age: 36 });
  const fragment = await client.PATCH('/users/{userId}', {
    params: { path: { userId: admin.userId } },
    body: { age: 37 },
    headers: { ...bearer, 'content-type': MERGE_PATCH, accept: FRAGMENT },
  });
  expect(fragment.response.headers.get('content-type')).toBe(FRAGMENT);
  expect(Object.keys(fragment.data ?? {}).sort()).toEqual(['age', 'modifiedon']);

  // Read it back, then as unchanged (304) with its ETag; every user, paged.
  const user = await client.GET('/users/{userId}', {
    params: { path: { userId: admin.userId } },
    headers: bearer,
  });
  expect(user.data).toMatchObject({ name: 'Ada', age: 37 });
  const unchanged = await client.GET('/users/{userId}', {
    params: {
      path: { userId: admin.userId },
      header: { 'If-None-Match': user.response.headers.get('etag')! },
    },
    headers: bearer,
  });
  expect(unchanged.response.status).toBe(304);
  const users = await client.GET('/users', { params: { query: { maxpagesize: 20 } }, headers: bearer });
  expect(users.data).toEqual(expect.arrayContaining([expect.objectContaining({ id: admin.userId })]));

  // A person's data as a download, built from the history; a customer's likewise.
  const exported = await client.GET('/users/{userId}/export', {
    params: { path: { userId: admin.userId } },
    headers: bearer,
  });
  expect(exported.response.headers.get('content-disposition')).toMatch(/^attachment; filename="/);
  expect(exported.data?.personalData.age.map((change: { value: unknown }) => change.value)).toEqual([
    30, 36, 37,
  ]);
  const customerExport = await client.GET('/customers/{id}/export', {
    params: { path: { id: 1 } },
    headers: bearer,
  });
  expect(customerExport.data?.subject).toEqual({ kind: 'customer', id: 1 });

  // A token of the session, then the session's end: every token of it stops working.
  const joined = await client.POST('/api/v1/account/tokens', { headers: bearer });
  expect(joined.response.status).toBe(201);
  const ended = await client.DELETE('/api/v1/account/tokens/current', { headers: bearer });
  expect(ended.response.status).toBe(204);
  const after = await client.GET('/customers', { headers: bearer });
  expect(after.response.status).toBe(401);

  // A reset by e-mail, its token used once, then a change while authenticated.
  const requested = await client.PUT('/api/v1/account/password', { body: { email: admin.email } });
  expect(requested.response.status).toBe(202);
  const token = await resetTokenFor(admin.email);
  const reset = await client.PUT('/api/v1/account/password', {
    body: { token, new: 'a new long passphrase' },
  });
  expect(reset.response.status).toBe(204);
  const again = await client.PUT('/api/v1/account/password', {
    body: { token, new: 'a new long passphrase' },
  });
  expect(again.response.status).toBe(400);
  expect(again.error).toMatchObject({ type: 'invalid-reset-token' });
  const changed = await client.PUT('/api/v1/account/password', {
    body: { old: 'a new long passphrase', new: 'correct horse battery' },
    headers: { authorization: basic({ email: admin.email, password: 'a new long passphrase' }) },
  });
  expect(changed.response.status).toBe(204);
  const relogged = await client.POST('/api/v1/account/tokens', {
    headers: { authorization: basic({ email: admin.email, password: 'correct horse battery' }) },
  });
  expect(relogged.response.status).toBe(201);
}
