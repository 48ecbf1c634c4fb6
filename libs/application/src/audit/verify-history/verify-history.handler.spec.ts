import { randomBytes } from 'node:crypto';
import { ChronicleConfig } from '@chronicle/config';
import { HISTORY_PROTECTION_STREAM } from '@chronicle/domain';
import { HistoryHead } from '@chronicle/event-store';
import { AuditSeal, signHead, signProtection } from '../audit-seal';
import { AuditWorld, auditWorld } from '../audit-world.spec-helper';
import { VerifyHistoryQuery } from './verify-history.query';
import { VerifyHistoryHandler } from './verify-history.handler';

describe('VerifyHistoryHandler', () => {
  let world: AuditWorld;
  let key: Buffer;
  let verifier: VerifyHistoryHandler;

  beforeEach(async () => {
    world = auditWorld();
    key = randomBytes(32);
    verifier = new VerifyHistoryHandler(world.store, {
      auditSealKey: key,
      dataDir: world.dir,
    } as ChronicleConfig);
    await world.append('customer-1', 'CustomerRegistered.v1', { customerId: 1, name: 'Nora' });
    await world.append('customer-1', 'CustomerChanged.v1', { customerId: 1, changes: { name: 'Nor' } });
  });
  afterEach(() => world.close());

  const verify = (
    seal: AuditSeal | null = null,
    upTo: HistoryHead['position'] | null = null,
    on = verifier,
  ) =>
    on.execute(
      new VerifyHistoryQuery(seal, upTo === null ? null : { commit: BigInt(upTo), prepare: BigInt(upTo) }),
    );
  const headAt = async (position: number): Promise<HistoryHead> => {
    const events = [];
    for await (const event of world.store.readAll()) events.push(event);
    const event = events[position - 1];
    return { position: String(position), hash: event.hash, recordedAt: event.recordedAt };
  };
  /** A HistoryProtected.v1 record of a rewrite from `oldHead`, signed with `signedWith`. */
  const protect = async (oldHead: HistoryHead, signedWith = key) => {
    const newHead = { position: '9', hash: 'e'.repeat(64), recordedAt: oldHead.recordedAt };
    await world.append(HISTORY_PROTECTION_STREAM, 'HistoryProtected.v1', {
      oldHead,
      newHead,
      firstChanged: '1',
      events: 1,
      erasedSubjectEvents: 0,
      signature: signProtection(oldHead, newHead, signedWith),
    });
  };

  it('given no seal, walks the whole chain and says nothing of a seal', async () => {
    expect(await verify()).toEqual({
      ok: true,
      scope: 'log',
      events: 2,
      head: await headAt(2),
      broken: null,
    });
  });

  it('walks up to the position asked for only', async () => {
    expect(await verify(null, '1')).toMatchObject({ ok: true, events: 1, head: await headAt(1) });
  });

  it('given a broken chain, is not ok and names the break', async () => {
    world.tamper(1, 'Nora', 'Anna');
    expect(await verify()).toMatchObject({ ok: false, broken: { position: '1' } });
    const sealed = signHead(await headAt(2), key);
    expect(await verify(sealed)).toMatchObject({ ok: false, broken: { position: '1' } });
  });

  it('given a seal of this history, signed with this key, says it holds', async () => {
    const seal = signHead(await headAt(1), key);
    await world.append('customer-2', 'CustomerRegistered.v1', { customerId: 2, name: 'Otto' });
    expect(await verify(seal)).toEqual({
      ok: true,
      scope: 'log',
      events: 3,
      head: await headAt(3),
      broken: null,
      seal: { position: '1', valid: true, problem: null },
    });
  });

  it('given a seal of another key, refuses it, and does not trust it to say where the history must reach', async () => {
    const seal = signHead({ ...(await headAt(2)), position: '7' }, randomBytes(32));
    expect(await verify(seal)).toMatchObject({
      ok: false,
      seal: { position: '7', valid: false, problem: 'the seal was not signed with this seal key' },
    });
  });

  it('given a seal but no seal key, says so', async () => {
    const keyless = new VerifyHistoryHandler(world.store, {
      auditSealKey: null,
      dataDir: world.dir,
    } as ChronicleConfig);
    const result = await verify(signHead(await headAt(2), key), null, keyless);
    expect(result).toMatchObject({
      ok: false,
      seal: {
        valid: false,
        problem: 'there is no seal key (AUDIT_SEAL_KEY or DATA_DIR/audit-seal-key)',
      },
    });
  });

  it('given a signed seal the history no longer holds, says why', async () => {
    const seal = signHead({ ...(await headAt(2)), hash: 'a'.repeat(64) }, key);
    expect((await verify(seal)).seal).toEqual({
      position: '2',
      valid: false,
      problem: `the history up to the sealed position 2 is not the one sealed (hash ${(await headAt(2)).hash}, sealed ${'a'.repeat(64)})`,
    });
  });

  describe('given a history re-chained by history protect', () => {
    it('holds a seal of the old head a signed record names, and names that record', async () => {
      const oldHead = { ...(await headAt(2)), hash: 'b'.repeat(64) };
      await protect(oldHead);
      expect(await verify(signHead(oldHead, key))).toMatchObject({
        ok: true,
        seal: { position: '2', valid: true, problem: null, protection: '3' },
      });
    });

    it('holds no seal of an old head over a chain that breaks, whatever a record names', async () => {
      const oldHead = { ...(await headAt(1)), hash: 'b'.repeat(64) };
      await protect(oldHead);
      world.tamper(2, 'Nor', 'Ann');
      expect(await verify(signHead(oldHead, key))).toMatchObject({
        ok: false,
        broken: { position: '2' },
        seal: { valid: false },
      });
    });

    it('holds no seal of an old head only an unsigned record names', async () => {
      const oldHead = { ...(await headAt(2)), hash: 'b'.repeat(64) };
      await protect(oldHead, randomBytes(32));
      const result = await verify(signHead(oldHead, key));
      expect(result).toMatchObject({ ok: false, seal: { valid: false } });
      expect(result.seal).not.toHaveProperty('protection');
      expect(result.seal?.problem).toMatch(/^the history up to the sealed position 2 is not the one sealed/);
    });

    it('holds no seal of another key, even of the old head a signed record names', async () => {
      const oldHead = { ...(await headAt(2)), hash: 'b'.repeat(64) };
      await protect(oldHead);
      expect(await verify(signHead(oldHead, randomBytes(32)))).toMatchObject({
        ok: false,
        seal: { valid: false, problem: 'the seal was not signed with this seal key' },
      });
    });

    it('leaves the mismatch of a seal whose position is none as it is', async () => {
      await protect({ ...(await headAt(2)), hash: 'b'.repeat(64) });
      const seal = signHead({ ...(await headAt(2)), position: 'x' }, key);
      expect((await verify(seal)).seal?.problem).toBe(
        'the sealed position x is not in the history (it ends at 3): the history was cut short or rewritten',
      );
    });

    it.each([
      ['position', { position: '1' }],
      ['hash', { hash: 'c'.repeat(64) }],
      ['recorded time', { recordedAt: '2020-01-01T00:00:00.000Z' }],
    ])(
      'holds no seal taken before the protect that differs from its old head in its %s',
      async (_what, change) => {
        const oldHead = { ...(await headAt(2)), hash: 'b'.repeat(64) };
        await protect(oldHead);
        const result = await verify(signHead({ ...oldHead, ...change }, key));
        expect(result).toMatchObject({ ok: false, seal: { valid: false } });
        expect(result.seal?.problem).toBe(
          'the seal was taken before history protect re-chained the history (HistoryProtected.v1 at 3, ' +
            `old head 2 with hash ${'b'.repeat(64)}), and is not that old head: check it with ` +
            '`audit verify --seal` on a backup taken before the protect, whose head must be that old head',
        );
      },
    );

    it('holds no seal of an earlier position than the old head, and says it was taken before the protect', async () => {
      const oldHead = { ...(await headAt(2)), hash: 'b'.repeat(64) };
      await protect(oldHead);
      const seal = signHead({ ...(await headAt(1)), hash: 'd'.repeat(64) }, key);
      expect((await verify(seal)).seal?.problem).toMatch(/^the seal was taken before history protect/);
    });

    it('leaves the mismatch of a seal taken after the protect as it is', async () => {
      const oldHead = { ...(await headAt(1)), hash: 'b'.repeat(64) };
      await protect(oldHead);
      const seal = signHead({ ...(await headAt(2)), hash: 'd'.repeat(64) }, key);
      expect((await verify(seal)).seal?.problem).toMatch(
        /^the history up to the sealed position 2 is not the one sealed/,
      );
    });
  });
});
