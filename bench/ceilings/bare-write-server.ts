/**
 * The write ceiling: a bare Fastify route answering PATCH /users/{id} by appending the same
 * UserPatched event, with the same metadata, through the same embedded store (the same group
 * commit, WAL and synchronous=FULL, personal values encrypted the same way), and answering the user as JSON with its ETag. No Nest, no
 * auth, no validation library, no command bus, no projection: what HTTP and the append alone cost.
 * Run as its own process by the write benchmark: DATA_DIR names its store (seeded with the same
 * users as the server's), PORT the port.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { parseConfig } from '@chronicle/config';
import { EventStore, openEventStore } from '@chronicle/event-store';

interface User {
  id: string;
  name: string;
  age: number;
  createdon: string;
  modifiedon: string;
  revision: number;
}

async function loadUsers(store: EventStore): Promise<Map<string, User>> {
  const users = new Map<string, User>();
  for await (const event of store.readAll()) {
    if (event.type !== 'UserRegistered.v2') continue;
    const data = event.data as { userId: string; name: string; age: number; createdon: string };
    users.set(data.userId, {
      id: data.userId,
      name: data.name,
      age: data.age,
      createdon: data.createdon,
      modifiedon: data.createdon,
      revision: event.revision,
    });
  }
  return users;
}

async function main(): Promise<void> {
  const store = await openEventStore(parseConfig(process.env));
  const users = await loadUsers(store);
  const app = Fastify();
  app.addContentTypeParser(
    'application/merge-patch+json',
    { parseAs: 'string' },
    app.getDefaultJsonParser('error', 'error'),
  );
  app.get('/health/ready', () => ({ status: 'ok' }));
  app.patch<{ Params: { id: string }; Body: { age: number } }>(
    '/users/:id',
    { schema: { body: { type: 'object', properties: { age: { type: 'integer', minimum: 0 } } } } },
    async (request, reply) => {
      const user = users.get(request.params.id);
      if (!user) return reply.code(404).send();
      const now = new Date().toISOString();
      const result = await store.append(
        `user-${user.id}`,
        [
          {
            id: randomUUID(),
            type: 'UserPatched.v1',
            data: { userId: user.id, changes: { age: request.body.age }, modifiedon: now },
            metadata: { actor: user.id, correlationId: randomUUID(), causationId: null, occurredAt: now },
          },
        ],
        user.revision,
      );
      user.revision = result.nextExpectedRevision;
      user.age = request.body.age;
      user.modifiedon = now;
      const { revision, ...body } = user;
      return reply.header('etag', `"${revision}"`).send(body);
    },
  );
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
  process.once('SIGTERM', () => void app.close().then(() => store.close().then(() => process.exit(0))));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
