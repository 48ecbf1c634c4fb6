import { createHash } from 'node:crypto';
import { addressHasher } from './address-hash';

describe('addressHasher', () => {
  const secret = Buffer.alloc(32, 7);

  it('names one address the same however it is spelt, and never as its plain SHA-256', () => {
    const limits = addressHasher(secret, 'attempt-limits');
    expect(limits(' Ada@Example.COM ')).toBe(limits('ada@example.com'));
    expect(limits('ada@example.com')).toMatch(/^[0-9a-f]{64}$/);
    expect(limits('ada@example.com')).not.toBe(createHash('sha256').update('ada@example.com').digest('hex'));
    expect(limits('bob@example.com')).not.toBe(limits('ada@example.com'));
  });

  it('gives each purpose and each secret keys of their own', () => {
    const address = 'ada@example.com';
    expect(addressHasher(secret, 'attempt-limits')(address)).not.toBe(
      addressHasher(secret, 'security-email-hash')(address),
    );
    expect(addressHasher(Buffer.alloc(32, 8), 'attempt-limits')(address)).not.toBe(
      addressHasher(secret, 'attempt-limits')(address),
    );
  });

  it('names its key by an id that is the same for the same secret and purpose, and differs otherwise', () => {
    const streams = addressHasher(secret, 'address-streams');
    expect(streams.keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(addressHasher(Buffer.alloc(32, 7), 'address-streams').keyId).toBe(streams.keyId);
    expect(addressHasher(Buffer.alloc(32, 8), 'address-streams').keyId).not.toBe(streams.keyId);
    expect(addressHasher(secret, 'attempt-limits').keyId).not.toBe(streams.keyId);
    expect(streams('ada@example.com')).not.toContain(streams.keyId);
  });
});
