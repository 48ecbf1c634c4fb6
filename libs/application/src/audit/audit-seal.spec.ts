import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  backupManifestSignedBy,
  parseReceipt,
  parseSeal,
  protectionSignedBy,
  receiptSignedBy,
  sealKey,
  sealSignedBy,
  signBackupManifest,
  signHead,
  signProtection,
  signReceipt,
} from './audit-seal';

const key = Buffer.alloc(32, 7);
const otherKey = Buffer.alloc(32, 8);
const head = { position: '42', hash: 'a'.repeat(64), recordedAt: '2026-11-27T00:00:00.000Z' };
const newHead = { position: '43', hash: 'b'.repeat(64), recordedAt: '2026-11-27T00:00:01.000Z' };

describe('audit seals, receipts and their kin', () => {
  it('verifies each kind of signature under its key only, and never as another kind', () => {
    const seal = signHead(head, key);
    expect(sealSignedBy(seal, key)).toBe(true);
    expect(sealSignedBy(seal, otherKey)).toBe(false);
    expect(sealSignedBy({ ...seal, position: '41' }, key)).toBe(false);
    expect(sealSignedBy({ ...seal, signature: 'ab' }, key)).toBe(false);

    const manifest = signBackupManifest('{"events":1}', key);
    expect(backupManifestSignedBy('{"events":1}', manifest, key)).toBe(true);
    expect(backupManifestSignedBy('{"events":2}', manifest, key)).toBe(false);
    // A seal's signature is no manifest's, though both are HMACs under one key.
    expect(
      backupManifestSignedBy(`${head.position}\n${head.hash}\n${head.recordedAt}`, seal.signature, key),
    ).toBe(false);

    const receipt = signReceipt(
      { subject: 'user-u-1', kind: 'user', erasedAt: head.recordedAt, position: '7', hash: 'c'.repeat(64) },
      key,
    );
    expect(receiptSignedBy(receipt, key)).toBe(true);
    expect(receiptSignedBy({ ...receipt, erasedAt: newHead.recordedAt }, key)).toBe(false);
    expect(receiptSignedBy(receipt, otherKey)).toBe(false);

    const protection = signProtection(head, newHead, key);
    expect(protectionSignedBy(head, newHead, protection, key)).toBe(true);
    expect(protectionSignedBy(newHead, head, protection, key)).toBe(false);
    expect(protectionSignedBy(head, newHead, protection, otherKey)).toBe(false);
  });

  it('reads a seal from a file only when every member has its form', () => {
    const seal = signHead(head, key);
    expect(parseSeal(seal)).toEqual(seal);
    for (const bad of [
      null,
      'a seal',
      { ...seal, position: '' },
      { ...seal, recordedAt: 42 },
      { ...seal, hash: 'A'.repeat(64) },
      { ...seal, hash: 7 },
      { ...seal, signature: 'f'.repeat(63) },
      { ...seal, signature: undefined },
    ]) {
      expect(parseSeal(bad)).toBeNull();
    }
  });

  it('reads a receipt from a file only when every member has its form', () => {
    const receipt = signReceipt(
      {
        subject: 'customer-3',
        kind: 'customer',
        erasedAt: head.recordedAt,
        position: '9',
        hash: 'd'.repeat(64),
      },
      key,
    );
    expect(parseReceipt(receipt)).toEqual(receipt);
    for (const bad of [
      undefined,
      42,
      { ...receipt, subject: '' },
      { ...receipt, erasedAt: null },
      { ...receipt, position: 9 },
      { ...receipt, kind: 'account' },
      { ...receipt, hash: 'd'.repeat(65) },
      { ...receipt, signature: 'not hex' },
    ]) {
      expect(parseReceipt(bad)).toBeNull();
    }
  });

  it('takes AUDIT_SEAL_KEY when set, else the key kept in DATA_DIR (made only when asked to)', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'seal-key-'));
    try {
      expect(sealKey({ auditSealKey: key, dataDir }, false)).toBe(key);
      expect(sealKey({ auditSealKey: null, dataDir }, false)).toBeNull();
      const made = sealKey({ auditSealKey: null, dataDir }, true);
      expect(made).not.toBeNull();
      expect(sealKey({ auditSealKey: null, dataDir }, false)?.equals(made!)).toBe(true);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
