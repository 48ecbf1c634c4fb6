import { aesGcmOpen, aesGcmSeal, UnreadableCiphertextError } from './aes-gcm';

const hex = (text: string) => Buffer.from(text, 'hex');

// The GCM specification's Test Case 16 (McGrew and Viega, "The Galois/Counter Mode of Operation"):
// AES-256, a 96-bit IV, 60 bytes of plaintext, 20 bytes of associated data.
const vector = {
  key: hex('feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308'),
  iv: hex('cafebabefacedbaddecaf888'),
  plaintext: hex(
    'd9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39',
  ),
  aad: hex('feedfacedeadbeeffeedfacedeadbeefabaddad2'),
  ciphertext: hex(
    '522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662',
  ),
  tag: hex('76fc6ece0f4e1768cddf8853bb2d551b'),
};
const sealedVector = Buffer.concat([vector.iv, vector.ciphertext, vector.tag]);

describe('AES-256-GCM', () => {
  it('seals the known answer of the GCM specification as IV, ciphertext, tag', () => {
    expect(aesGcmSeal(vector.key, vector.plaintext, vector.aad, vector.iv).toString('hex')).toBe(
      sealedVector.toString('hex'),
    );
    expect(aesGcmOpen(vector.key, sealedVector, vector.aad, 'the vector').equals(vector.plaintext)).toBe(
      true,
    );
  });

  it('draws a new random IV for every seal, across the pools they are drawn from', () => {
    // 1,000 seals: about three pools of 341 IVs.
    const seals = Array.from({ length: 1000 }, () => aesGcmSeal(vector.key, vector.plaintext, vector.aad));
    expect(new Set(seals.map((sealed) => sealed.subarray(0, 12).toString('hex'))).size).toBe(1000);
    for (const sealed of seals) {
      expect(aesGcmOpen(vector.key, sealed, vector.aad, 'a seal').equals(vector.plaintext)).toBe(true);
    }
  });

  it('refuses every altered byte, another key, other associated data, and a cut', () => {
    for (let i = 0; i < sealedVector.length; i++) {
      const altered = Buffer.from(sealedVector);
      altered[i] ^= 0x01;
      expect(() => aesGcmOpen(vector.key, altered, vector.aad, 'the vector')).toThrow(
        UnreadableCiphertextError,
      );
    }
    const otherKey = Buffer.from(vector.key);
    otherKey[31] ^= 0x80;
    expect(() => aesGcmOpen(otherKey, sealedVector, vector.aad, 'the vector')).toThrow(
      UnreadableCiphertextError,
    );
    expect(() => aesGcmOpen(vector.key, sealedVector, vector.aad.subarray(1), 'the vector')).toThrow(
      'the vector cannot be decrypted',
    );
    expect(() => aesGcmOpen(vector.key, sealedVector.subarray(0, 40), vector.aad, 'x')).toThrow(
      UnreadableCiphertextError,
    );
    expect(() => aesGcmOpen(vector.key, sealedVector.subarray(0, 27), vector.aad, 'x')).toThrow(
      UnreadableCiphertextError,
    );
  });

  it('seals an empty plaintext into IV and tag alone', () => {
    const sealed = aesGcmSeal(vector.key, Buffer.alloc(0), vector.aad);
    expect(sealed).toHaveLength(28);
    expect(aesGcmOpen(vector.key, sealed, vector.aad, 'nothing')).toHaveLength(0);
  });
});
