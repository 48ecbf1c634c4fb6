import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  backupManifestSignedBy,
  parseReceipt,
  parseSeal,
  protectionSignedBy,
  receiptSignedBy,
  SEAL_KEY_FILE,
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

  it('sign the texts API.md states, each under its own label: seals and receipts kept elsewhere keep verifying', () => {
    const hmac = (text: string) => createHmac('sha256', key).update(text).digest('hex');
    expect(signHead(head, key).signature).toBe(
      hmac(`chronicle-seal-1\n${head.position}\n${head.hash}\n${head.recordedAt}`),
    );
    expect(signBackupManifest('{"events":1}', key)).toBe(hmac('chronicle-backup-1\n{"events":1}'));
    const erasure = {
      subject: 'user-u-1',
      kind: 'user' as const,
      erasedAt: head.recordedAt,
      position: '7',
      hash: 'c'.repeat(64),
    };
    expect(signReceipt(erasure, key).signature).toBe(
      hmac(
        `chronicle-erasure-receipt-1\n${JSON.stringify(['user-u-1', 'user', head.recordedAt, '7', 'c'.repeat(64)])}`,
      ),
    );
    expect(signProtection(head, newHead, key)).toBe(
      hmac(
        `chronicle-history-protected-1\n${head.position}\n${head.hash}\n${head.recordedAt}\n` +
          `${newHead.position}\n${newHead.hash}\n${newHead.recordedAt}`,
      ),
    );
  });

  it('signs a receipt of its own members only', () => {
    const erasure = {
      subject: 'customer-3',
      kind: 'customer' as const,
      erasedAt: 'x',
      position: '9',
      hash: 'd'.repeat(64),
    };
    const receipt = signReceipt({ ...erasure, extra: 'dropped' } as typeof erasure, key);
    expect(receipt).toEqual({ ...erasure, signature: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(receiptSignedBy(receipt, key)).toBe(true);
  });

  it('refuses a signature of the wrong length without comparing it', () => {
    const seal = signHead(head, key);
    expect(sealSignedBy({ ...seal, signature: `${seal.signature}00` }, key)).toBe(false);
    expect(backupManifestSignedBy('{}', '', key)).toBe(false);
  });

  it('reads a seal from a file only when every member has its form', () => {
    const seal = signHead(head, key);
    expect(parseSeal(seal)).toEqual(seal);
    expect(parseSeal({ ...seal, extra: 1 })).toEqual(seal);
    for (const bad of [
      null,
      'a seal',
      { ...seal, position: '' },
      { ...seal, recordedAt: 42 },
      { ...seal, hash: 'A'.repeat(64) },
      { ...seal, hash: 7 },
      { ...seal, signature: 'f'.repeat(63) },
      { ...seal, signature: undefined },
      { ...seal, position: 42 },
      { ...seal, recordedAt: '' },
      { ...seal, hash: `x${'a'.repeat(64)}` },
      { ...seal, hash: `${'a'.repeat(64)}x` },
      { ...seal, signature: `x${seal.signature}` },
      { ...seal, signature: `${seal.signature}x` },
      { ...seal, signature: seal.signature.toUpperCase() },
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
    expect(parseReceipt({ ...receipt, kind: 'user', extra: 1 })).toEqual({ ...receipt, kind: 'user' });
    for (const bad of [
      undefined,
      null,
      42,
      { ...receipt, subject: '' },
      { ...receipt, erasedAt: null },
      { ...receipt, position: 9 },
      { ...receipt, kind: 'account' },
      { ...receipt, hash: 'd'.repeat(65) },
      { ...receipt, signature: 'not hex' },
      { ...receipt, subject: 3 },
      { ...receipt, erasedAt: '' },
      { ...receipt, position: '' },
      { ...receipt, hash: 7 },
      { ...receipt, hash: `x${'d'.repeat(64)}` },
      { ...receipt, signature: `${receipt.signature}x` },
      { ...receipt, signature: receipt.signature.toUpperCase() },
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
      // A damaged key file is refused, naming the variable that would replace it and what replacing it costs.
      writeFileSync(join(dataDir, SEAL_KEY_FILE), 'not a key');
      expect(() => sealKey({ auditSealKey: null, dataDir }, false)).toThrow(
        expect.objectContaining({
          message: expect.stringMatching(
            /AUDIT_SEAL_KEY.*audit-seal-key.*\(seals signed with the old key then fail to verify\)/s,
          ),
        }),
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
