import { createHmac, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { ChronicleConfig, keptSecret } from '@chronicle/config';
import { HistoryHead } from '@chronicle/event-store';

/** A signed head of the history (API.md "Command line"), kept elsewhere by an auditor. */
export interface AuditSeal extends HistoryHead {
  /** HMAC-SHA256 (hex) of the head under the seal key. */
  signature: string;
}

export const SEAL_KEY_FILE = 'audit-seal-key';

/** The seal key apart from the token secret: AUDIT_SEAL_KEY, else the one kept in DATA_DIR. */
export function sealKey(config: ChronicleConfig, create: boolean): Buffer | null {
  if (config.auditSealKey !== null) return config.auditSealKey;
  return keptSecret(
    join(config.dataDir, SEAL_KEY_FILE),
    'AUDIT_SEAL_KEY',
    'seals signed with the old key then fail to verify',
    create,
  );
}

function signatureOf(head: HistoryHead, key: Buffer): Buffer {
  return createHmac('sha256', key)
    .update(`chronicle-seal-1\n${head.position}\n${head.hash}\n${head.recordedAt}`)
    .digest();
}

export function signHead(head: HistoryHead, key: Buffer): AuditSeal {
  return {
    position: head.position,
    hash: head.hash,
    recordedAt: head.recordedAt,
    signature: signatureOf(head, key).toString('hex'),
  };
}

/** Whether `seal` was signed with `key`, compared in constant time. */
export function sealSignedBy(seal: AuditSeal, key: Buffer): boolean {
  const given = Buffer.from(seal.signature, 'hex');
  const expected = signatureOf(seal, key);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A seal as read from a file, or null when it is not one. */
export function parseSeal(value: unknown): AuditSeal | null {
  if (typeof value !== 'object' || value === null) return null;
  const { position, hash, recordedAt, signature } = value as Record<string, unknown>;
  const isText = (field: unknown): field is string => typeof field === 'string' && field.length > 0;
  if (!isText(position) || !isText(recordedAt)) return null;
  if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) return null;
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature)) return null;
  return { position, hash, recordedAt, signature };
}
