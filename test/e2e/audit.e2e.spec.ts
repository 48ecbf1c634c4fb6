import { jsonLines, runCliProcess } from './support/cli-process';
import { basic, E2E_BACKEND, issueToken, startTestApp, TestAccount, TestApp } from './support/test-app';

describe('audit of the event history', () => {
  let subject: TestApp;
  let admin: TestAccount;
  let member: TestAccount;

  const audit = (query: string, account: TestAccount = admin) =>
    fetch(`${subject.url}/api/v1/audit/events${query}`, { headers: { authorization: basic(account) } });
  const records = async (query: string) => {
    const response = await audit(query);
    expect(response.status).toBe(200);
    return (await response.json()) as Array<Record<string, any>>;
  };

  beforeAll(async () => {
    subject = await startTestApp();
    admin = await subject.createAccount({ admin: true, name: 'Auditor' });
    member = await subject.createAccount({ name: 'Member', age: 20 });
    await subject.seedCustomers(5);
    // The change an auditor must be able to trace: who, when, from which request.
    const response = await fetch(`${subject.url}/users/${member.userId}`, {
      method: 'PATCH',
      headers: {
        authorization: basic(admin),
        'content-type': 'application/merge-patch+json',
        'x-request-id': 'req-audit-1',
      },
      body: JSON.stringify({ age: 21 }),
    });
    expect(response.status).toBe(200);
  });
  afterAll(() => subject.destroy());

  it('answers who changed a user, when, and from which request', async () => {
    const history = await records(`?stream=user-${member.userId}`);
    expect(history.map((record) => record.type)).toEqual(['UserRegistered.v2', 'UserPatched.v1']);
    expect(history[1]).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      position: expect.stringMatching(/^\d+(:\d+)?$/),
      stream: `user-${member.userId}`,
      revision: 1,
      type: 'UserPatched.v1',
      occurredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      recordedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      actor: admin.accountId,
      // The server's own id; the client's is kept beside it, never as the correlation.
      correlationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      causationId: null,
      clientRequestId: 'req-audit-1',
      auth: { method: 'basic', tokenId: null },
      data: { userId: member.userId, changes: { age: 21 }, modifiedon: expect.any(String) },
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it('lists the whole history oldest first, and pages it with Link rel="next"', async () => {
    const all = await records('?limit=1000');
    const positions = all.map((record) => BigInt(record.position.split(':')[0]));
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const paged: Array<Record<string, any>> = [];
    let next: string | null = '/api/v1/audit/events?limit=3';
    while (next) {
      const response = await fetch(`${subject.url}${next}`, { headers: { authorization: basic(admin) } });
      expect(response.status).toBe(200);
      const page = (await response.json()) as Array<Record<string, any>>;
      expect(page.length).toBeLessThanOrEqual(3);
      paged.push(...page);
      const link = response.headers.get('link');
      next = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : null;
      if (next) expect(next).toContain('limit=3');
    }
    // Reading the audit is itself recorded (a security event, flushed each minute): a flush may
    // land between the two reads and add records after the first read's end.
    expect(paged.slice(0, all.length)).toEqual(all);
    expect(paged.slice(all.length).every((record) => record.stream.startsWith('security-'))).toBe(true);
  });

  it('filters by type, actor and position, keeping the filters in the next link', async () => {
    const customers = await records('?type=CustomerRegistered.v1');
    expect(customers).toHaveLength(5);
    expect(new Set(customers.map((record) => record.type))).toEqual(new Set(['CustomerRegistered.v1']));

    const byAdmin = await records(`?actor=${admin.accountId}`);
    expect(byAdmin.map((record) => record.type)).toEqual(['UserPatched.v1']);

    const after = await records(`?type=CustomerRegistered.v1&after=${customers[2].position}`);
    expect(after).toEqual(customers.slice(3));

    const first = await audit('?type=CustomerRegistered.v1&limit=2');
    expect(first.headers.get('link')).toBe(
      `</api/v1/audit/events?type=CustomerRegistered.v1&after=${customers[1].position}&limit=2>; rel="next"`,
    );
  });

  describe('one query per question', () => {
    /** The correlation id the server gave the traced PATCH (its client sent req-audit-1). */
    const patchCorrelation = async (): Promise<string> =>
      (await records(`?stream=user-${member.userId}`)).find(
        (record) => record.clientRequestId === 'req-audit-1',
      )!.correlationId as string;
    /** Audit reads are security events, flushed each minute: a flush may land between two reads. */
    const history = (list: Array<Record<string, any>>) =>
      list.filter((record) => !String(record.stream).startsWith('security-'));

    it('finds one correlation, one actor, several types and a time window, each record with its id', async () => {
      const all = history(await records('?limit=1000'));
      const correlationId = await patchCorrelation();
      const [patch] = await records(`?correlationId=${correlationId}`);
      expect(patch).toMatchObject({
        type: 'UserPatched.v1',
        correlationId,
        clientRequestId: 'req-audit-1',
        actor: admin.accountId,
      });
      expect(all.find((record) => record.id === patch.id)).toEqual(patch);

      const types = await records('?type=UserPatched.v1&type=CustomerRegistered.v1');
      expect(types.map((record) => record.type).sort()).toEqual([
        ...Array(5).fill('CustomerRegistered.v1'),
        'UserPatched.v1',
      ]);

      const times = all.map((record) => record.recordedAt);
      expect([...times].sort()).toEqual(times);
      const from = all[3].recordedAt;
      const to = patch.recordedAt;
      const window = history(await records(`?since=${from}&until=${to}&limit=1000`));
      expect(window).toEqual(all.filter((record) => record.recordedAt >= from && record.recordedAt < to));
      expect(window.length).toBeGreaterThan(0);
      // Another way to write the same instant is the same filter.
      const offset = new Date(Date.parse(from)).toISOString().replace('Z', '+00:00');
      expect(history(await records(`?since=${encodeURIComponent(offset)}&until=${to}&limit=1000`))).toEqual(
        window,
      );
      expect(await records(`?actor=${admin.accountId}&type=CustomerRegistered.v1`)).toEqual([]);
    });

    it('fills each page to its limit before giving a next link, and gives none at the end', async () => {
      const customers = await records('?type=CustomerRegistered.v1&limit=1000');
      const pages: Array<Array<Record<string, any>>> = [];
      let next: string | null = '/api/v1/audit/events?type=CustomerRegistered.v1&limit=2';
      while (next) {
        const response = await fetch(`${subject.url}${next}`, { headers: { authorization: basic(admin) } });
        pages.push((await response.json()) as Array<Record<string, any>>);
        const link = response.headers.get('link');
        next = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : null;
      }
      expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
      expect(pages.flat()).toEqual(customers);
      const one = await audit(`?correlationId=${await patchCorrelation()}&limit=1`);
      expect(one.headers.get('link')).toBeNull();
    });

    it('gives the same answers from the CLI', async () => {
      const correlationId = await patchCorrelation();
      const api = await records(`?correlationId=${correlationId}&type=UserPatched.v1&type=UserRegistered.v2`);
      expect(api).toHaveLength(1);
      const cli = await runCliProcess(
        subject.dataDir,
        'audit',
        '--correlation-id',
        correlationId,
        '--type',
        'UserPatched.v1',
        '--type',
        'UserRegistered.v2',
      );
      expect(cli.code).toBe(0);
      // The records, then the export's manifest and cursor lines.
      expect(jsonLines(cli.stdout).slice(0, -2)).toEqual(api);

      const all = history(await records('?limit=1000'));
      const since = all[2].recordedAt;
      const windowed = await runCliProcess(subject.dataDir, 'audit', '--since', since, '--limit', '1000');
      expect(history(jsonLines(windowed.stdout).slice(0, -2))).toEqual(
        all.filter((record) => record.recordedAt >= since),
      );

      const invalid = await runCliProcess(subject.dataDir, 'audit', '--until', 'tomorrow');
      expect(invalid.code).toBe(2);
      expect(invalid.stderr).toContain('RFC 3339');
    });
  });

  it('redacts the password hash and shows no secret anywhere', async () => {
    const response = await audit('?limit=1000');
    const text = await response.text();
    expect(text).not.toMatch(/\$argon2/);
    const opened = (JSON.parse(text) as Array<Record<string, any>>).filter(
      (record) => record.type === 'AccountOpened.v1',
    );
    expect(opened.length).toBeGreaterThanOrEqual(2);
    for (const record of opened) expect(record.data.passwordHash).toBe('[redacted]');
  });

  it('is for administrators only', async () => {
    const forbidden = await audit('', member);
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    // Authorization comes before validation: a member learns nothing from a 400.
    expect((await audit('?limit=0', member)).status).toBe(403);
    expect((await fetch(`${subject.url}/api/v1/audit/events`)).status).toBe(401);
  });

  it('accepts the access token in the query, and never puts it in a link', async () => {
    const token = await issueToken(subject.url, admin);
    const response = await fetch(`${subject.url}/api/v1/audit/events?limit=1&access_token=${token}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('link')).not.toContain('access_token');
  });

  it.each([
    ['limit=0'],
    ['limit=1001'],
    ['limit=ten'],
    ['after=abc'],
    ['after=-1'],
    // Positions no log can hold: EventStoreDB would fail on them.
    ['after=9223372036854775808'],
    ['after=18446744073709551615'],
    ['type=not a type'],
    ['since=yesterday'],
    ['since=2026-13-01T00:00:00Z'],
    ['since=2026-02-30T00:00:00Z'],
    ['until=2025-02-29T12:00:00%2B01:00'],
    ['until=2026-11-22'],
    ['correlationId='],
    ['actor='],
    ['stream='],
    ['colour=blue'],
  ])('answers %s with a 400 problem naming the parameter', async (query) => {
    const response = await audit(`?${query}`);
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { type: string; errors: Array<{ field: string }> };
    expect(problem.type).toBe('invalid-parameters');
    expect(problem.errors[0].field).toBe(query.split('=')[0]);
  });

  it('answers a position whose prepare comes after its commit with the invalid-position refusal', async () => {
    const response = await audit('?after=10:20');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ type: 'invalid-position', errors: [{ field: 'after' }] });
  });

  // Only EventStoreDB has records spanning several positions; on the embedded store every
  // sequence number is a position.
  (E2E_BACKEND === 'doubles' ? it : it.skip)(
    'answers a position inside a record with a 400 naming after, in the API and the CLI',
    async () => {
      const [first] = await records('?limit=1');
      const inside = `${BigInt(first.position.split(':')[0]) + 1n}`;
      const response = await audit(`?after=${inside}`);
      expect(response.status).toBe(400);
      const problem = (await response.json()) as { type: string; errors: Array<{ field: string }> };
      expect(problem).toMatchObject({ type: 'invalid-position', errors: [{ field: 'after' }] });

      const cli = await runCliProcess(subject.dataDir, 'audit', '--after', inside);
      expect(cli.code).toBe(2);
      expect(cli.stderr).toContain('invalid-position');
    },
  );

  it('prints the same records from the CLI as JSON lines, and as a table', async () => {
    const api = await records(`?stream=user-${member.userId}`);
    const lines = await runCliProcess(subject.dataDir, 'audit', '--stream', `user-${member.userId}`);
    expect(lines.code).toBe(0);
    // The records, then the export's manifest and the cursor to go on from.
    expect(jsonLines(lines.stdout).slice(0, -2)).toEqual(api);

    const table = await runCliProcess(
      subject.dataDir,
      'audit',
      '--actor',
      admin.accountId,
      '--format',
      'table',
    );
    expect(table.code).toBe(0);
    const [patched] = await records(`?actor=${admin.accountId}`);
    expect(table.stdout).toContain('UserPatched.v1');
    expect(table.stdout).toContain(patched.correlationId);
    expect(table.stdout).toMatch(/^\d+ records?$/m);

    const invalid = await runCliProcess(subject.dataDir, 'audit', '--after', 'yesterday');
    expect(invalid.code).not.toBe(0);
  });

  it('shows each projection with its checkpoint, the head and the lag to admins only', async () => {
    await subject.settle();
    const response = await fetch(`${subject.url}/api/v1/admin/projections`, {
      headers: { authorization: basic(admin) },
    });
    expect(response.status).toBe(200);
    const status = (await response.json()) as {
      head: string;
      projections: Array<Record<string, any>>;
      sagas: Array<Record<string, any>>;
      parked: unknown[];
    };
    expect(status.parked).toEqual([]);
    expect(status.projections.map((projection) => projection.name)).toEqual(['customers', 'users']);
    for (const projection of status.projections) {
      expect(projection).toEqual({
        name: expect.any(String),
        checkpoint: status.head,
        lag: 0,
        lagExact: true,
        lagSeconds: 0,
      });
    }
    // Its checkpoint moves at the filter's checkpoints, which a short history may not reach.
    expect(status.sagas).toEqual([
      expect.objectContaining({ name: 'saga:password', lag: 0, lagExact: true, lagSeconds: 0 }),
    ]);
    const forbidden = await fetch(`${subject.url}/api/v1/admin/projections`, {
      headers: { authorization: basic(member) },
    });
    expect(forbidden.status).toBe(403);
  });
});
