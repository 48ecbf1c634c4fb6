import { randomBytes } from 'node:crypto';
import { HISTORY_PROTECTION_STREAM } from '@chronicle/domain';
import { HistoryRewriteSummary } from '@chronicle/event-store';
import { protectionSignedBy } from './audit-seal';
import { AuditWorld, auditWorld } from './audit-world.spec-helper';
import {
  protectionOf,
  protectionRecord,
  rechainedBy,
  SignedProtection,
  signedProtections,
} from './history-protections';

const summary: HistoryRewriteSummary = {
  oldHead: { position: '40', hash: 'a'.repeat(64), recordedAt: '2026-11-27T05:00:00.000Z' },
  newHead: { position: '41', hash: 'b'.repeat(64), recordedAt: '2026-11-27T06:00:00.000Z' },
  firstChanged: '12',
  changed: 7,
  erased: 2,
};

describe('history protections', () => {
  const key = randomBytes(32);

  it('record both heads, the first event changed and the counts, the heads signed together', () => {
    expect(protectionOf(summary)).toEqual({
      oldHead: summary.oldHead,
      newHead: summary.newHead,
      firstChanged: '12',
      events: 7,
      erasedSubjectEvents: 2,
    });
    const record = protectionRecord(summary, key);
    expect(record).toEqual({
      type: 'HistoryProtected.v1',
      data: { ...protectionOf(summary), signature: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    expect(protectionSignedBy(summary.oldHead, summary.newHead, record.data.signature, key)).toBe(true);
    expect(protectionSignedBy(summary.newHead, summary.oldHead, record.data.signature, key)).toBe(false);
    expect(protectionSignedBy(summary.oldHead, summary.newHead, record.data.signature, randomBytes(32))).toBe(
      false,
    );
  });

  describe('signedProtections', () => {
    let world: AuditWorld;
    beforeEach(() => {
      world = auditWorld();
    });
    afterEach(() => world.close());

    const all = async (after?: bigint, withKey = key) => {
      const found: SignedProtection[] = [];
      const position = after === undefined ? undefined : { commit: after, prepare: after };
      for await (const protection of signedProtections(world.store, withKey, position))
        found.push(protection);
      return found;
    };

    it('yields the records signed with the key only, oldest first, each with its position, after the one asked for', async () => {
      const signed = protectionRecord(summary, key);
      const forged = protectionRecord(summary, randomBytes(32));
      const later = protectionRecord({ ...summary, firstChanged: '30' }, key);
      await world.append('customer-1', 'CustomerRegistered.v1', { customerId: 1, name: 'Nora' });
      for (const record of [signed, forged, later])
        await world.append(HISTORY_PROTECTION_STREAM, record.type, record.data);

      expect(await all()).toEqual([
        { position: '2', record: signed.data },
        { position: '4', record: later.data },
      ]);
      expect(await all(2n)).toEqual([{ position: '4', record: later.data }]);
      expect(await all(undefined, randomBytes(32))).toEqual([]);
    });
  });

  describe('rechainedBy', () => {
    const protection: SignedProtection = { position: '42', record: protectionRecord(summary, key).data };

    it.each([
      ['11', false],
      ['12', true],
      ['25', true],
      ['40', true],
      ['41', false],
      ['not a position', false],
    ])('at %s: %p', (at, rechained) => {
      expect(rechainedBy(protection, at)).toBe(rechained);
    });

    it('is false for a record whose positions are none', () => {
      const record = protection.record;
      expect(rechainedBy({ ...protection, record: { ...record, firstChanged: 'x' } }, '25')).toBe(false);
      expect(
        rechainedBy(
          { ...protection, record: { ...record, oldHead: { ...record.oldHead, position: 'x' } } },
          '25',
        ),
      ).toBe(false);
    });
  });
});
