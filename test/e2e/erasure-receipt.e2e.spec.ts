import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonLines, runCliProcess as cli } from './support/cli-process';
import { newDataDir } from './support/test-app';

describe('audit receipt and audit verify-receipt', () => {
  const dataDir = newDataDir();
  const receiptFile = join(newDataDir(), 'receipt.json');
  let erased: Record<string, any>;

  beforeAll(async () => {
    expect((await cli(dataDir, 'customers', 'seed', '--count', '2')).code).toBe(0);
    const erase = await cli(dataDir, 'erase', '--customer', '1');
    expect(erase.code).toBe(0);
    [erased] = jsonLines(erase.stdout);
  });

  it('prints the signed receipt of an erasure, which verifies against the history', async () => {
    const result = await cli(dataDir, 'audit', 'receipt', '--subject', 'customer-1');

    expect(result.code).toBe(0);
    const [receipt] = jsonLines(result.stdout);
    expect(receipt).toEqual({
      subject: 'customer-1',
      kind: 'customer',
      erasedAt: erased.erasedAt,
      position: erased.position,
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      signature: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    // The event at that position, as the audit shows it, has that hash.
    const audit = jsonLines((await cli(dataDir, 'audit', '--stream', 'customer-1')).stdout);
    expect(audit.find((record) => record.type === 'SubjectErased.v1')).toMatchObject({
      position: erased.position,
      hash: receipt.hash,
    });

    writeFileSync(receiptFile, JSON.stringify(receipt));
    const verified = await cli(dataDir, 'audit', 'verify-receipt', '--receipt', receiptFile);
    expect(verified.code).toBe(0);
    expect(jsonLines(verified.stdout)).toEqual([
      { ok: true, subject: 'customer-1', position: erased.position, problem: null, broken: null },
    ]);
  });

  it('refuses a receipt changed after signing, with exit 1', async () => {
    const [receipt] = jsonLines((await cli(dataDir, 'audit', 'receipt', '--subject', 'customer-1')).stdout);
    const forged = join(newDataDir(), 'forged.json');
    writeFileSync(forged, JSON.stringify({ ...receipt, subject: 'customer-2' }));

    const result = await cli(dataDir, 'audit', 'verify-receipt', '--receipt', forged);

    expect(result.code).toBe(1);
    expect(jsonLines(result.stdout)).toEqual([
      expect.objectContaining({ ok: false, problem: 'the receipt was not signed with this seal key' }),
    ]);
  });

  it('gives no receipt for a subject never erased: exit 1 with a JSON error', async () => {
    const result = await cli(dataDir, 'audit', 'receipt', '--subject', 'customer-2');

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(jsonLines(result.stderr)).toEqual([
      {
        error: 'not-erased',
        message: 'customer-2 was never erased: there is no erasure to give a receipt for',
      },
    ]);
  });

  it('names what a subject is when given something else, and a file that holds no receipt is a usage error', async () => {
    const bare = await cli(dataDir, 'audit', 'receipt', '--subject', '1');
    expect(bare.code).toBe(1);
    expect(jsonLines(bare.stderr)).toEqual([
      { error: 'invalid-subject', message: expect.stringContaining('user-<user id> or customer-<number>') },
    ]);

    const notReceipt = join(newDataDir(), 'not-a-receipt.json');
    writeFileSync(notReceipt, '{"position":"1"}');
    const usage = await cli(dataDir, 'audit', 'verify-receipt', '--receipt', notReceipt);
    expect(usage.code).toBe(2);
    expect(jsonLines(usage.stderr)[0]).toMatchObject({ error: 'usage' });
  });
});
