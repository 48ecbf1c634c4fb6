import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ChronicleConfig } from '@chronicle/config';
import { SqliteEventStore } from '@chronicle/event-store';
import Database from 'better-sqlite3';
import { ErasureReceipt, signHead, signReceipt } from '../audit-seal';
import { ErasureReceiptHandler, VerifyReceiptHandler } from './erasure-receipt.handler';
import { ErasureReceiptQuery, VerifyReceiptQuery } from './erasure-receipt.query';

const ERASED_AT = '2026-11-27T05:00:00.000Z';

describe('erasure receipts', () => {
  let dir: string;
  let store: SqliteEventStore;
  let config: ChronicleConfig;
  let receipts: ErasureReceiptHandler;
  let verifier: VerifyReceiptHandler;

  const append = (stream: string, type: string, data: Record<string, unknown>) =>
    store.append(
      stream,
      [
        {
          id: `${stream}-${type}`,
          type,
          data,
          metadata: { actor: 'a-admin', correlationId: 'c-1', causationId: null, occurredAt: ERASED_AT },
        },
      ],
      'any',
    );

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'receipt-'));
    store = SqliteEventStore.open(dir);
    config = { auditSealKey: randomBytes(32), dataDir: dir } as ChronicleConfig;
    receipts = new ErasureReceiptHandler(store, config);
    verifier = new VerifyReceiptHandler(store, config);
    await append('customer-1', 'CustomerRegistered.v1', {
      customerId: 1,
      name: 'Nora',
      email: 'n@example.com',
    });
    await append('customer-2', 'CustomerRegistered.v1', {
      customerId: 2,
      name: 'Otto',
      email: 'o@example.com',
    });
    await append('customer-1', 'SubjectErased.v1', {
      subject: 'customer-1',
      kind: 'customer',
      erasedAt: ERASED_AT,
    });
    await append('customer-2', 'CustomerChanged.v1', { customerId: 2, changes: { name: 'Ott' } });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("signs the erasure with its position and its event's hash, and the receipt verifies", async () => {
    const receipt = await receipts.execute(new ErasureReceiptQuery('customer-1'));

    const [{ link }] = await store.readChainLinks([
      { position: { commit: 3n, prepare: 3n }, stream: 'customer-1', revision: 1 },
    ]);
    expect(receipt).toEqual({
      subject: 'customer-1',
      kind: 'customer',
      erasedAt: ERASED_AT,
      position: '3',
      hash: link!.hash,
      signature: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(await verifier.execute(new VerifyReceiptQuery(receipt))).toEqual({
      ok: true,
      subject: 'customer-1',
      position: '3',
      problem: null,
      broken: null,
    });
  });

  it('gives none for a subject never erased, or for a name that is no subject', async () => {
    await expect(receipts.execute(new ErasureReceiptQuery('customer-2'))).rejects.toMatchObject({
      code: 'not-erased',
      message: 'customer-2 was never erased: there is no erasure to give a receipt for',
    });
    await expect(receipts.execute(new ErasureReceiptQuery('account-1'))).rejects.toMatchObject({
      code: 'invalid-subject',
    });
  });

  it('refuses a receipt changed after signing, or signed with another key', async () => {
    const receipt = await receipts.execute(new ErasureReceiptQuery('customer-1'));
    const changed: ErasureReceipt = { ...receipt, erasedAt: '2026-11-27T06:00:00.000Z' };
    const otherKey = new VerifyReceiptHandler(store, { ...config, auditSealKey: randomBytes(32) });

    expect(await verifier.execute(new VerifyReceiptQuery(changed))).toMatchObject({
      ok: false,
      problem: 'the receipt was not signed with this seal key',
    });
    expect(await otherKey.execute(new VerifyReceiptQuery(receipt))).toMatchObject({ ok: false });
  });

  it("never takes a seal's signature for a receipt's", async () => {
    const receipt = await receipts.execute(new ErasureReceiptQuery('customer-1'));
    const seal = signHead(
      { position: receipt.position, hash: receipt.hash, recordedAt: ERASED_AT },
      config.auditSealKey!,
    );

    const result = await verifier.execute(new VerifyReceiptQuery({ ...receipt, signature: seal.signature }));

    expect(result).toMatchObject({ ok: false, problem: 'the receipt was not signed with this seal key' });
  });

  it('refuses a signed receipt whose erasure the history does not hold as received', async () => {
    const receipt = await receipts.execute(new ErasureReceiptQuery('customer-1'));
    // Signed with the right key but naming another position: the history holds the erasure at 3.
    const elsewhere = signReceipt({ ...receipt, position: '4' }, config.auditSealKey!);
    const otherHash = signReceipt({ ...receipt, hash: 'f'.repeat(64) }, config.auditSealKey!);

    expect(await verifier.execute(new VerifyReceiptQuery(elsewhere))).toMatchObject({
      ok: false,
      problem: expect.stringContaining("the history holds customer-1's erasure at 3"),
    });
    expect(await verifier.execute(new VerifyReceiptQuery(otherHash))).toMatchObject({
      ok: false,
      problem: `the erasure at 3 is stored with hash ${receipt.hash}, not the receipt's ${'f'.repeat(64)}`,
    });
  });

  it('gives no receipt over a history broken before the erasure, and names the break when checking one', async () => {
    const receipt = await receipts.execute(new ErasureReceiptQuery('customer-1'));
    const db = new Database(join(dir, 'events.db'));
    db.exec('DROP TRIGGER events_no_update');
    db.prepare("UPDATE events SET data = replace(data, 'Otto', 'Anna') WHERE position = 2").run();
    db.close();

    await expect(receipts.execute(new ErasureReceiptQuery('customer-1'))).rejects.toMatchObject({
      code: 'history-broken',
      message: 'No receipt is given: the hash chain breaks at position 2 (see audit verify)',
    });
    expect(await verifier.execute(new VerifyReceiptQuery(receipt))).toMatchObject({
      ok: false,
      problem: null,
      broken: { position: '2' },
    });
  });
});
