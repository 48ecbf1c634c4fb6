import fc from 'fast-check';
import { Document, DocumentedRequest, Operation, RequestChecker } from './support/openapi-requests';
import { resolve, validValues, wrongValues } from './support/schema-arbitraries';
import { basic, rawRequest, startTestApp, TestAccount, TestApp } from './support/test-app';

/** Runs per operation, for valid requests and for invalid ones: bounded so the file takes well under a minute. */
const RUNS = 40;

interface Sent {
  method: string;
  path: string;
  request: DocumentedRequest;
}

/**
 * A property-based fuzz driven by the document the app serves (Schemathesis's idea, with
 * fast-check): every operation, with requests generated from its parameters' and body's schemas,
 * valid ones and broken ones. It fails on any 5xx, on a status the operation does not declare, and
 * on a valid request refused for a reason the document could have stated: a valid request is
 * served, or refused only with a problem type its operation declares as a refusal (an example
 * under that status).
 */
describe('every operation of the document, fuzzed from its schemas', () => {
  let subject: TestApp;
  let admin: TestAccount;
  /** The user whose id the fuzz sends now and then: not the admin's, whose credentials it uses. */
  let member: TestAccount;
  let document: Document;
  let requests: RequestChecker;
  /** Requests sent, by kind (valid, invalid, unoffered method) and status. */
  const statuses = new Map<string, Map<number, number>>();
  /** The declared refusals valid requests met, by problem type. */
  const refusals = new Map<string, number>();

  beforeAll(async () => {
    // Limits high enough that the fuzz's wrong passwords and reset requests meet the real answers.
    subject = await startTestApp({
      env: {
        LOGIN_ATTEMPTS_PER_ACCOUNT: '100000',
        LOGIN_ATTEMPTS_PER_CLIENT: '100000',
        RESET_REQUESTS_PER_CLIENT: '100000',
        RESET_REQUESTS_PER_EMAIL: '100000',
      },
    });
    admin = await subject.createAccount({ admin: true });
    member = await subject.createAccount();
    await subject.seedCustomers(30);
    document = (await (await fetch(`${subject.url}/docs/json`)).json()) as Document;
    requests = new RequestChecker(document);
  });
  afterAll(async () => {
    for (const [kind, counts] of statuses) {
      const total = [...counts.values()].reduce((sum, count) => sum + count, 0);
      const byStatus = [...counts].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`);
      process.stdout.write(`document fuzz, ${kind}: ${total} requests; ${byStatus.join(', ')}\n`);
    }
    const met = [...refusals].map(([type, n]) => `${type}: ${n}`).join(', ');
    process.stdout.write(`document fuzz, declared refusals of valid requests: ${met}\n`);
    await subject.destroy();
  });

  /** One token for every request, and a fresh one for each request that may end its own session (DELETE). */
  let token: string | null = null;
  async function issueToken(): Promise<string> {
    const response = await rawRequest(`${subject.url}/api/v1/account/tokens`, 'POST', [
      'authorization',
      basic(admin),
      // No body: without a length, Node's client would send an empty chunked one.
      'content-length',
      '0',
    ]);
    if (response.status !== 201) throw new Error(`no token: ${response.status} ${response.body}`);
    return (JSON.parse(response.body) as { access_token: string }).access_token;
  }
  const bearerFor = async (method: string) =>
    method === 'delete' ? issueToken() : (token ??= await issueToken());

  /** A value as a query or path parameter carries it. */
  const wire = (value: unknown) =>
    typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);

  async function send(kind: string, { method, path, request }: Sent) {
    const url = new URL(
      path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(wire(request.path?.[name]))),
      subject.url,
    );
    for (const [name, value] of Object.entries(request.query ?? {})) {
      for (const each of Array.isArray(value) ? value : [value]) url.searchParams.append(name, wire(each));
    }
    const headers = ['authorization', `Bearer ${await bearerFor(method)}`];
    for (const [name, value] of Object.entries(request.headers ?? {})) headers.push(name, String(value));
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    if (body === undefined) headers.push('content-length', '0');
    else headers.push('content-type', request.contentType ?? 'application/json');
    const response = await rawRequest(url.toString(), method.toUpperCase(), headers, body);
    const counts = statuses.get(kind) ?? new Map<number, number>();
    statuses.set(kind, counts.set(response.status, (counts.get(response.status) ?? 0) + 1));
    return response;
  }

  const operations = (): [string, string, Operation][] =>
    Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]): [string, string, Operation] => [
        method,
        path,
        operation,
      ]),
    );

  /** Requests valid under the operation's schemas; a user id is a real one now and then. */
  function validRequests(method: string, path: string, operation: Operation): fc.Arbitrary<Sent> {
    const parts: Record<string, fc.Arbitrary<Record<string, unknown>>> = {};
    for (const where of ['path', 'query', 'header'] as const) {
      const parameters = (operation.parameters ?? []).filter((parameter) => parameter.in === where);
      parts[where] = fc.record(
        Object.fromEntries(
          parameters.map((parameter) => {
            const values = validValues(parameter.schema, document);
            const known = parameter.name === 'userId' ? fc.oneof(values, fc.constant(member.userId)) : values;
            return [parameter.name, known];
          }),
        ),
        {
          requiredKeys: parameters
            .filter((parameter) => parameter.required)
            .map((parameter) => parameter.name),
        },
      );
    }
    const content = Object.entries(operation.requestBody?.content ?? {});
    const body =
      content.length === 0
        ? fc.constant(undefined)
        : fc.oneof(
            ...content.map(([mediaType, { schema }]) =>
              validValues(schema, document).map((value) => ({ mediaType, value })),
            ),
          );
    return fc.record({ path: parts.path, query: parts.query, headers: parts.header, body }).map((given) => ({
      method,
      path,
      request: {
        path: given.path,
        query: given.query,
        headers: given.headers,
        contentType: given.body?.mediaType,
        body: given.body?.value,
      },
    }));
  }

  /** A valid request with one part broken: a parameter of the wrong shape, an unknown one, or a body member. */
  function invalidRequests(method: string, path: string, operation: Operation): fc.Arbitrary<Sent> {
    const names = (operation.parameters ?? []).filter((p) => p.in !== 'header').map((p) => [p.in, p.name]);
    const breaks = fc.oneof(
      fc.tuple(fc.constant('query'), fc.stringMatching(/^[a-z]{1,8}$/), wrongValues()),
      ...(names.length > 0
        ? [fc.tuple(fc.constantFrom(...names), wrongValues()).map(([[at, name], value]) => [at, name, value])]
        : []),
      ...(operation.requestBody
        ? [fc.tuple(fc.constant('body'), fc.stringMatching(/^[a-z]{1,8}$/), wrongValues())]
        : []),
    ) as fc.Arbitrary<[string, string, unknown]>;
    return fc.tuple(validRequests(method, path, operation), breaks).map(([sent, [at, name, value]]) => {
      const request = { ...sent.request };
      if (at === 'body') {
        const original = request.body;
        request.body =
          typeof original === 'object' && original !== null && !Array.isArray(original)
            ? { ...original, [name]: value }
            : value;
      } else {
        const where = at as 'path' | 'query';
        request[where] = { ...request[where], [name]: value };
      }
      return { ...sent, request };
    });
  }

  /** The problem types the operation declares under `status` as refusals a valid request may meet. */
  const refusalsOf = (operation: Operation, status: number): string[] =>
    Object.keys(
      (resolve(operation.responses[String(status)] ?? {}, document) as Operation['responses'][string])
        .content?.['application/problem+json']?.examples ?? {},
    );

  function expectDeclared(operation: Operation, sent: Sent, response: { status: number; body: string }) {
    const what = `${sent.method.toUpperCase()} ${sent.path} ${JSON.stringify(sent.request)} → ${response.status} ${response.body.slice(0, 300)}`;
    expect({ what, serverError: response.status >= 500 }).toEqual({ what, serverError: false });
    expect({ what, declared: String(response.status) in operation.responses }).toEqual({
      what,
      declared: true,
    });
  }

  it('serves every valid request, or refuses it only as its operation declares', async () => {
    let checked = 0;
    for (const [method, path, operation] of operations()) {
      await fc.assert(
        fc.asyncProperty(validRequests(method, path, operation), async (sent) => {
          expect(requests.problems(sent.method, sent.path, sent.request)).toEqual([]);
          const response = await send('valid', sent);
          expectDeclared(operation, sent, response);
          if (response.status >= 400) {
            const type = (JSON.parse(response.body) as { type: string }).type;
            const what = `${method.toUpperCase()} ${path} ${JSON.stringify(sent.request)} → ${response.status} ${response.body.slice(0, 300)}`;
            const declared = refusalsOf(operation, response.status);
            refusals.set(type, (refusals.get(type) ?? 0) + 1);
            expect({ what, type, declared: declared.includes(type) }).toEqual({ what, type, declared: true });
          }
          checked++;
        }),
        { numRuns: RUNS },
      );
    }
    expect(checked).toBe(operations().length * RUNS);
  }, 120_000);

  it('answers every invalid request below 500 with a declared status, any refusal as problem details', async () => {
    let invalid = 0;
    for (const [method, path, operation] of operations()) {
      await fc.assert(
        fc.asyncProperty(invalidRequests(method, path, operation), async (sent) => {
          const response = await send('invalid', sent);
          expectDeclared(operation, sent, response);
          if (response.status >= 400)
            expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
          if (requests.problems(sent.method, sent.path, sent.request).length > 0) invalid++;
        }),
        { numRuns: RUNS },
      );
    }
    // Most broken requests are invalid under the document: the generator breaks what it means to.
    expect(invalid).toBeGreaterThan(operations().length * RUNS * 0.5);
  }, 120_000);

  it('answers a method a documented path does not offer with 405 and Allow, never 404', async () => {
    const paths = Object.keys(document.paths);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...paths).chain((path) => {
          const offered = Object.keys(document.paths[path]);
          const [method, operation] = Object.entries(document.paths[path])[0];
          return fc.tuple(
            validRequests(method, path, operation),
            fc.constantFrom(...['get', 'post', 'put', 'patch', 'delete'].filter((m) => !offered.includes(m))),
          );
        }),
        async ([sent, unoffered]) => {
          const response = await send('unoffered method', { ...sent, method: unoffered });
          const what = `${unoffered.toUpperCase()} ${sent.path}`;
          expect({ what, status: response.status }).toEqual({ what, status: 405 });
          const allow = String(response.headers.allow).split(', ');
          expect(allow).toEqual(
            expect.arrayContaining(Object.keys(document.paths[sent.path]).map((m) => m.toUpperCase())),
          );
          expect(allow).not.toContain(unoffered.toUpperCase());
        },
      ),
      { numRuns: RUNS },
    );
  });
});
