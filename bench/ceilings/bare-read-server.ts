/**
 * The read ceiling: a bare Fastify server serving the same customer pages (the same documents,
 * paging and headers) from a plain in-memory array, with a response schema. No Nest, no auth,
 * no validation library, no query bus: what HTTP and serialisation alone cost on this machine.
 * Run as its own process by the read benchmark: DATA_DIR names the store to load, PORT the port.
 */
import Fastify from 'fastify';
import { SqliteEventStore } from '@chronicle/event-store';

interface Customer {
  id: number;
  name: string;
  email: string;
  createdon: string;
}

async function loadCustomers(dataDir: string): Promise<Customer[]> {
  const store = SqliteEventStore.open(dataDir);
  const customers: Customer[] = [];
  try {
    for await (const event of store.readAll()) {
      if (event.type !== 'CustomerRegistered.v1') continue;
      const data = event.data as { customerId: number; name: string; email: string; createdon: string };
      customers.push({ id: data.customerId, name: data.name, email: data.email, createdon: data.createdon });
    }
  } finally {
    await store.close();
  }
  return customers.sort((a, b) => a.id - b.id);
}

async function main(): Promise<void> {
  const customers = await loadCustomers(process.env.DATA_DIR ?? '');
  const app = Fastify();
  app.get<{ Querystring: { page?: number; maxpagesize?: number } }>(
    '/customers',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: { page: { type: 'integer', minimum: 1 }, maxpagesize: { type: 'integer', minimum: 1 } },
        },
        // A compiled stringifier, Fastify's fastest way to send these objects.
        response: {
          200: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                id: { type: 'integer' },
                name: { type: 'string' },
                email: { type: 'string' },
                createdon: { type: 'string' },
              },
            },
          },
        },
      },
    },
    (request, reply) => {
      const page = request.query.page ?? 1;
      const size = Math.min(request.query.maxpagesize ?? 100, 1000);
      const start = (page - 1) * size;
      const items = customers.slice(start, start + size);
      const links: string[] = [];
      if (start + items.length < customers.length) {
        links.push(`</customers?maxpagesize=${size}&page=${page + 1}>; rel="next"`);
      }
      if (page > 1) links.push(`</customers?maxpagesize=${size}&page=${page - 1}>; rel="prev"`);
      if (links.length > 0) void reply.header('link', links.join(', '));
      void reply.header('x-total-count', String(customers.length));
      return items;
    },
  );
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
