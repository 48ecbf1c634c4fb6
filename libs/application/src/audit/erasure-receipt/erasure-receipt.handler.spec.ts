import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { ChronicleConfig } from '@chronicle/config';
import { SqliteEventStore } from '@chronicle/event-store';
import Database from 'better-sqlite3';
import { ErasureReceipt, receiptSignedBy, sealKey, signHead, signReceipt } from '../audit-seal';
import { protectionRecord } from '../history-protections';
import { erasableSubjectKind, ErasureReceiptHandler, VerifyReceiptHandler } from './erasure-receipt.handler';
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
      name: 'ErasureReceiptError',
      code: 'invalid-subject',
      message: 'account-1 names no subject: give its stream, user-<user id> or customer-<number>',
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

  describe('checking a receipt', () => {
    const check = (receipt: ErasureReceipt, on = verifier) => on.execute(new VerifyReceiptQuery(receipt));
    const signed = (receipt: ErasureReceipt) => signReceipt(receipt, config.auditSealKey!);

    it('says so when there is no seal key to check it with', async () => {
      const receipt = await receipts.execute(new ErasureReceiptQuery('customer-1'));
      const keyless = new VerifyReceiptHandler(store, { ...config, auditSealKey: null });
      expect(await check(receipt, keyless)).toEqual({
        ok: false,
        subject: 'customer-1',
        position: '3',
        problem: 'there is no seal key (AUDIT_SEAL_KEY or DATA_DIR/audit-seal-key)',
        broken: null,
      });
    });

    it('refuses a signed receipt naming no position, or a subject never erased', async () => {
      const receipt = await receipts.execute(new ErasureReceiptQuery('customer-1'));
      expect(await check(signed({ ...receipt, position: 'x' }))).toMatchObject({
        ok: false,
        problem: 'x is not a position',
      });
      expect(await check(signed({ ...receipt, subject: 'customer-2' }))).toMatchObject({
        ok: false,
        subject: 'customer-2',
        problem: 'customer-2 was never erased: there is no erasure to give a receipt for',
      });
    });

    it('refuses a signed receipt of another kind or time of erasure, saying what the history holds', async () => {
      const receipt = await receipts.execute(new ErasureReceiptQuery('customer-1'));
      const held = `the history holds customer-1's erasure at 3 (customer, ${ERASED_AT}), not the one received`;
      expect(await check(signed({ ...receipt, kind: 'user' }))).toMatchObject({ ok: false, problem: held });
      expect(await check(signed({ ...receipt, erasedAt: '2026-11-27T06:00:00.000Z' }))).toMatchObject({
        ok: false,
        problem: held,
      });
    });

    it('says when a later history protect re-chained the erasure, and only a protect that covers it', async () => {
      const receipt = await receipts.execute(new ErasureReceiptQuery('customer-1'));
      const before = signed({ ...receipt, hash: 'f'.repeat(64) });
      const head = (position: string) => ({ position, hash: 'a'.repeat(64), recordedAt: ERASED_AT });
      const protect = (firstChanged: string, oldHead: string) => {
        const record = protectionRecord(
          { oldHead: head(oldHead), newHead: head('9'), firstChanged, changed: 1, erased: 0 },
          config.auditSealKey!,
        );
        const metadata = { actor: 'cli:ada', correlationId: 'c-2', causationId: null, occurredAt: ERASED_AT };
        return store.append('historyprotection', [{ id: randomUUID(), ...record, metadata }], 'any');
      };
      // One that re-chained from after the erasure does not cover it.
      await protect('4', '4');
      expect((await check(before)).problem).toBe(
        `the erasure at 3 is stored with hash ${receipt.hash}, not the receipt's ${'f'.repeat(64)}`,
      );
      await protect('1', '4');
      expect(await check(before)).toMatchObject({
        ok: false,
        problem:
          'the erasure at 3 was re-chained by history protect (HistoryProtected.v1 at 6) after this receipt ' +
          'was given, so its hash is of the history before: take a new receipt with `audit receipt`, and ' +
          'check this one on a backup taken before the protect',
      });
    });
  });

  describe('giving a receipt', () => {
    it('signs with the seal key kept in DATA_DIR, made on first use, when AUDIT_SEAL_KEY is not set', async () => {
      const kept = { ...config, auditSealKey: null };
      const receipt = await new ErasureReceiptHandler(store, kept).execute(
        new ErasureReceiptQuery('customer-1'),
      );
      expect(receiptSignedBy(receipt, sealKey(kept, false)!)).toBe(true);
      expect(
        await new VerifyReceiptHandler(store, kept).execute(new VerifyReceiptQuery(receipt)),
      ).toMatchObject({
        ok: true,
      });
    });
  });
});

describe('erasableSubjectKind', () => {
  it.each([
    ['user-0192d3a4', 'user'],
    ['customer-12', 'customer'],
    ['user-', null],
    ['user-a b', null],
    ['xuser-1', null],
    ['customer-', null],
    ['customer-x', null],
    ['customer-0', null],
    ['account-1', null],
    // As long as `customer-`, with a number where a customer's would be.
    ['account-12', null],
  ])('of %s is %p', (subject, kind) => {
    expect(erasableSubjectKind(subject)).toBe(kind);
  });
});
