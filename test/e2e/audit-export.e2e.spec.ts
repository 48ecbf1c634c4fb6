import { SecurityEvents } from '@chronicle/application';
import { jsonLines, runCliProcess } from './support/cli-process';
import { basic, startTestApp, TestAccount, TestApp } from './support/test-app';

// Most tests start the CLI, which reads 1,200 customers or more: on the doubles, on a busy CI
// machine, two such runs went past jest's default 30 s (2026-11-28, when it still started from
// source). A ceiling, not a time.
jest.setTimeout(90_000);

/** Exports of the audit that never lose a record (issue 22). */
describe('audit exports', () => {
  let subject: TestApp;
  let admin: TestAccount;
  let member: TestAccount;
  /** The whole history as JSON, page by page through the API. */
  let history: Array<Record<string, any>>;

  const audit = (query: string, accept?: string) =>
    fetch(`${subject.url}/api/v1/audit/events${query}`, {
      headers: { authorization: basic(admin), ...(accept ? { accept } : {}) },
    });

  beforeAll(async () => {
    subject = await startTestApp();
    admin = await subject.createAccount({ admin: true });
    member = await subject.createAccount({ name: 'Member' });
    // More than one page of the query (1,000), and far more than the CLI's old default of 100.
    await subject.seedCustomers(1200);
    const patched = await fetch(`${subject.url}/users/${member.userId}`, {
      method: 'PATCH',
      headers: {
        authorization: basic(admin),
        'content-type': 'application/merge-patch+json',
        // Safe to echo, and a formula to a spreadsheet.
        'x-request-id': '-2-3',
      },
      body: JSON.stringify({ name: 'Ada, "the first"' }),
    });
    expect(patched.status).toBe(200);
    history = [];
    let next: string | null = '/api/v1/audit/events?limit=1000';
    while (next) {
      const response = await fetch(`${subject.url}${next}`, { headers: { authorization: basic(admin) } });
      history.push(...((await response.json()) as Array<Record<string, any>>));
      const link = response.headers.get('link');
      next = link ? /^<([^>]+)>/.exec(link)![1] : null;
    }
    // Only the history before the export began: reading the audit is itself recorded, later.
    history = history.filter((record) => !record.stream.startsWith('security-'));
  }, 120_000);
  afterAll(() => subject.destroy());

  /**
   * What `audit seal` signs now: with nothing written since the export (the audit reads above are
   * flushed first), the head an export's manifest must name.
   */
  const sealNow = async () => {
    const sealed = await runCliProcess(subject.dataDir, 'audit', 'seal');
    expect(sealed.code).toBe(0);
    const { position, hash, recordedAt } = jsonLines(sealed.stdout)[0];
    return { position, hash, recordedAt };
  };

  it('answers Accept: text/csv with RFC 4180 CSV, formulas neutralised', async () => {
    const response = await audit(`?stream=user-${member.userId}`, 'text/csv');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    const text = await response.text();
    const lines = text.split('\r\n');
    expect(lines.at(-1)).toBe('');
    expect(lines[0]).toBe(
      'id,position,stream,revision,type,occurredAt,recordedAt,actor,correlationId,causationId,clientRequestId,' +
        'authMethod,authTokenId,data,hash,erased',
    );
    expect(lines).toHaveLength(4);
    expect(lines[2]).toContain(`,'-2-3,basic,,`);
    expect(lines[2]).toContain('"{""userId"":');
    expect(lines[2]).toContain('Ada, \\""the first\\""');
  });

  it('answers a media type it cannot produce with 406 naming the supported ones', async () => {
    const response = await audit('?limit=1', 'application/xml');
    expect(response.status).toBe(406);
    expect(await response.json()).toMatchObject({
      type: 'not-acceptable',
      supported: ['application/json', 'text/csv'],
    });
    expect((await audit('?limit=1', 'text/csv;q=0, */*')).headers.get('content-type')).toMatch(
      /^application\/json/,
    );
  });

  it('streams every record from the CLI, with no cap, then a manifest and a cursor line', async () => {
    await subject.app.get(SecurityEvents).flush();
    const result = await runCliProcess(subject.dataDir, 'audit', '--format', 'ndjson');
    expect(result.code).toBe(0);
    const lines = jsonLines(result.stdout);
    const [manifest, cursor] = lines.slice(-2);
    const records = lines.slice(0, -2);
    expect(records.length).toBeGreaterThan(2400);
    expect(records.filter((record) => !record.stream.startsWith('security-'))).toEqual(history);
    const last = records.at(-1)!;
    // The chain's head where the export ended, as `audit seal` gives it.
    expect(manifest).toEqual({
      manifest: {
        head: last.position,
        count: records.length,
        lastRecordHash: last.hash,
        chain: {
          scope: expect.stringMatching(/^(log|stream)$/),
          ok: true,
          events: expect.any(Number),
          head: { position: last.position, hash: expect.any(String), recordedAt: last.recordedAt },
          broken: null,
        },
      },
    });
    expect(manifest.manifest.chain.head).toEqual(await sealNow());
    expect(cursor).toEqual({ cursor: manifest.manifest.head });
  });

  it('exports CSV from the CLI, ending with the manifest and cursor lines too', async () => {
    const result = await runCliProcess(
      subject.dataDir,
      'audit',
      '--format',
      'csv',
      '--stream',
      `user-${member.userId}`,
    );
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\r\n');
    expect(lines[0]).toMatch(/^id,position,stream,/);
    expect(lines.slice(1, 3).map((line) => line.split(',')[4])).toEqual([
      'UserRegistered.v2',
      'UserPatched.v1',
    ]);
    const [manifest, cursor] = jsonLines(lines.at(-1)!);
    expect(manifest.manifest.count).toBe(2);
    expect(cursor).toEqual({ cursor: manifest.manifest.head });
  });

  it("gives a filtered export's manifest the chain's head at the export's head, not the last record's hash", async () => {
    await subject.app.get(SecurityEvents).flush();
    const result = await runCliProcess(subject.dataDir, 'audit', '--stream', `user-${member.userId}`);
    expect(result.code).toBe(0);
    const lines = jsonLines(result.stdout);
    const [manifest] = lines.slice(-2);
    const records = lines.slice(0, -2);
    expect(records.map((record) => record.type)).toEqual(['UserRegistered.v2', 'UserPatched.v1']);
    const sealed = await sealNow();
    expect(manifest).toEqual({
      manifest: {
        head: sealed.position,
        count: 2,
        lastRecordHash: records[1].hash,
        chain: {
          scope: expect.any(String),
          ok: true,
          events: expect.any(Number),
          head: sealed,
          broken: null,
        },
      },
    });
    // The patch is far from the head: its own hash stands for nothing beyond it.
    expect(records[1].position).not.toBe(sealed.position);
    expect(sealed.hash).not.toBe(records[1].hash);
  });

  it('says where a --limit cut it short, so that going on from the cursor loses nothing', async () => {
    const first = jsonLines(
      (await runCliProcess(subject.dataDir, 'audit', '--type', 'CustomerRegistered.v1', '--limit', '700'))
        .stdout,
    );
    expect(first).toHaveLength(702);
    const { cursor } = first.at(-1)!;
    expect(cursor).toBe(first[699].position);
    const rest = jsonLines(
      (await runCliProcess(subject.dataDir, 'audit', '--type', 'CustomerRegistered.v1', '--after', cursor))
        .stdout,
    );
    const customers = [...first.slice(0, -2), ...rest.slice(0, -2)];
    expect(customers.map((record) => record.data.customerId)).toEqual(
      history
        .filter((record) => record.type === 'CustomerRegistered.v1')
        .map((record) => record.data.customerId),
    );
    expect(customers).toHaveLength(1200);
  });
});
