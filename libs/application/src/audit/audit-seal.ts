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
export function sealKey(
  config: Pick<ChronicleConfig, 'auditSealKey' | 'dataDir'>,
  create: boolean,
): Buffer | null {
  if (config.auditSealKey !== null) return config.auditSealKey;
  return keptSecret(
    join(config.dataDir, SEAL_KEY_FILE),
    'AUDIT_SEAL_KEY',
    'seals signed with the old key then fail to verify',
    create,
  );
}

/**
 * HMAC-SHA256 under the seal key of `text`, labelled with what is signed (a seal, a backup's
 * manifest), so that one kind of signature never passes for another.
 */
function keyedSignature(label: string, text: string, key: Buffer): Buffer {
  return createHmac('sha256', key).update(`${label}\n${text}`).digest();
}

/** Whether `signature` (hex) is `text`'s under `key` and `label`, compared in constant time. */
function signatureMatches(label: string, text: string, signature: string, key: Buffer): boolean {
  const given = Buffer.from(signature, 'hex');
  const expected = keyedSignature(label, text, key);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const SEAL_LABEL = 'chronicle-seal-1';
const sealText = (head: HistoryHead): string => `${head.position}\n${head.hash}\n${head.recordedAt}`;

export function signHead(head: HistoryHead, key: Buffer): AuditSeal {
  return {
    position: head.position,
    hash: head.hash,
    recordedAt: head.recordedAt,
    signature: keyedSignature(SEAL_LABEL, sealText(head), key).toString('hex'),
  };
}

/** Whether `seal` was signed with `key`, compared in constant time. */
export function sealSignedBy(seal: AuditSeal, key: Buffer): boolean {
  return signatureMatches(SEAL_LABEL, sealText(seal), seal.signature, key);
}

const BACKUP_LABEL = 'chronicle-backup-1';

/** A backup manifest's signature (hex) under the seal key: `text` is the manifest without it. */
export function signBackupManifest(text: string, key: Buffer): string {
  return keyedSignature(BACKUP_LABEL, text, key).toString('hex');
}

/** Whether a backup manifest's `signature` is its text's under `key`, in constant time. */
export function backupManifestSignedBy(text: string, signature: string, key: Buffer): boolean {
  return signatureMatches(BACKUP_LABEL, text, signature, key);
}

const RECEIPT_LABEL = 'chronicle-erasure-receipt-1';

/**
 * The signed proof of an erasure (`audit receipt`): the subject's SubjectErased.v1, where the
 * history holds it and that event's chained hash, signed under the seal key like a seal.
 */
export interface ErasureReceipt {
  /** The erased subject's stream: `user-<id>` or `customer-<n>`. */
  subject: string;
  kind: 'user' | 'customer';
  erasedAt: string;
  /** The SubjectErased.v1 event's position and its stored hash. */
  position: string;
  hash: string;
  signature: string;
}

const receiptText = (receipt: Omit<ErasureReceipt, 'signature'>): string =>
  JSON.stringify([receipt.subject, receipt.kind, receipt.erasedAt, receipt.position, receipt.hash]);

export function signReceipt(receipt: Omit<ErasureReceipt, 'signature'>, key: Buffer): ErasureReceipt {
  const { subject, kind, erasedAt, position, hash } = receipt;
  const signed = { subject, kind, erasedAt, position, hash };
  return { ...signed, signature: keyedSignature(RECEIPT_LABEL, receiptText(signed), key).toString('hex') };
}

/** Whether `receipt` was signed with `key`, compared in constant time. */
export function receiptSignedBy(receipt: ErasureReceipt, key: Buffer): boolean {
  return signatureMatches(RECEIPT_LABEL, receiptText(receipt), receipt.signature, key);
}

/** A receipt as read from a file, or null when it is not one. */
export function parseReceipt(value: unknown): ErasureReceipt | null {
  if (typeof value !== 'object' || value === null) return null;
  const { subject, kind, erasedAt, position, hash, signature } = value as Record<string, unknown>;
  const isText = (field: unknown): field is string => typeof field === 'string' && field.length > 0;
  if (!isText(subject) || !isText(erasedAt) || !isText(position)) return null;
  if (kind !== 'user' && kind !== 'customer') return null;
  if (!isHex64(hash) || !isHex64(signature)) return null;
  return { subject, kind, erasedAt, position, hash, signature };
}

const isHex64 = (value: unknown): value is string =>
  typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);

const PROTECTION_LABEL = 'chronicle-history-protected-1';
const protectionText = (oldHead: HistoryHead, newHead: HistoryHead): string =>
  `${sealText(oldHead)}\n${sealText(newHead)}`;

/**
 * The signature `history protect` records with the old and the new head (HistoryProtected.v1):
 * whoever holds the seal key vouches that the history sealed as `oldHead` became `newHead`, so a
 * seal of the old head still verifies, and no one without the key can forge such a record.
 */
export function signProtection(oldHead: HistoryHead, newHead: HistoryHead, key: Buffer): string {
  return keyedSignature(PROTECTION_LABEL, protectionText(oldHead, newHead), key).toString('hex');
}

export function protectionSignedBy(
  oldHead: HistoryHead,
  newHead: HistoryHead,
  signature: string,
  key: Buffer,
): boolean {
  return signatureMatches(PROTECTION_LABEL, protectionText(oldHead, newHead), signature, key);
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
