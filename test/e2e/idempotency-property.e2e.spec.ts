import fc from 'fast-check';
import { sendAs, startTestApp, TestAccount, TestApp } from './support/test-app';

type Operation =
  | { kind: 'create'; name: string; key: number; sends: number }
  | { kind: 'patch'; target: number; name: string; key: number; sends: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant('create' as const),
    name: fc.constantFrom('Ada', 'Grace', 'Alan'),
    key: fc.nat({ max: 5 }),
    sends: fc.integer({ min: 1, max: 3 }),
  }),
  fc.record({
    kind: fc.constant('patch' as const),
    target: fc.nat(),
    name: fc.constantFrom('Ada', 'Grace', 'Alan', 'Edsger'),
    key: fc.nat({ max: 5 }),
    sends: fc.integer({ min: 1, max: 3 }),
  }),
);

/**
 * Random POSTs and PATCHes under random Idempotency-Keys (a few, so that keys are reused for
 * other requests), each sent one to three times: the customers read model holds exactly the
 * effects of the distinct requests, as a model that applies each key's first request once says.
 */
describe('Idempotency-Key, property: retries never add effects', () => {
  let subject: TestApp;
  let admin: TestAccount;
  let run = 0;

  beforeAll(async () => {
    subject = await startTestApp();
    admin = await subject.createAccount({ admin: true });
  });
  afterAll(() => subject.destroy());

  it('leaves the read model holding the effects of each distinct request once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 10 }), async (operations) => {
        run++;
        /** The model: each key's first request, its answer, and the customers it made. */
        const firstRequest = new Map<number, string>();
        const firstAnswer = new Map<number, string>();
        const names = new Map<number, string>();
        const ids: number[] = [];
        for (const op of operations) {
          const target = op.kind === 'patch' && ids.length > 0 ? ids[op.target % ids.length] : null;
          const [method, path, body] =
            op.kind === 'patch' && target !== null
              ? (['PATCH', `/customers/${target}`, { name: op.name }] as const)
              : (['POST', '/customers', { name: op.name, email: 'p@example.com' }] as const);
          const request = `${method} ${path} ${JSON.stringify(body)}`;
          const key = `run-${run}-key-${op.key}`;
          for (let send = 0; send < op.sends; send++) {
            const response = await sendAs(admin, `${subject.url}${path}`, method, body, {
              headers: { 'idempotency-key': key },
            });
            const text = await response.text();
            const owner = firstRequest.get(op.key);
            if (owner !== undefined && owner !== request) {
              expect(response.status).toBe(422);
              continue;
            }
            expect(response.status).toBe(method === 'POST' ? 201 : 200);
            if (owner !== undefined) {
              expect(text).toBe(firstAnswer.get(op.key));
              continue;
            }
            // The key's first request: its effect, once.
            firstRequest.set(op.key, request);
            firstAnswer.set(op.key, text);
            const customer = JSON.parse(text) as { id: number; name: string };
            if (method === 'POST') ids.push(customer.id);
            names.set(customer.id, op.name);
          }
        }
        await subject.settle();
        const listed = await sendAs(
          admin,
          `${subject.url}/customers?gt=${Math.min(...ids) - 1}&maxpagesize=1000`,
          'GET',
        );
        const customers = (await listed.json()) as { id: number; name: string }[];
        expect(customers.map(({ id, name }) => [id, name])).toEqual(ids.map((id) => [id, names.get(id)]));
      }),
      { numRuns: 15 },
    );
  });
});
