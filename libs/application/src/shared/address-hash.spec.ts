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
});
