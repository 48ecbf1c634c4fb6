import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ChronicleConfig } from '@chronicle/config';
import { SEAL_KEY_FILE, sealKey, sealSignedBy } from '../audit-seal';
import { AuditWorld, auditWorld } from '../audit-world.spec-helper';
import { HistoryNotSealableError } from './seal-history.query';
import { SealHistoryHandler } from './seal-history.handler';

describe('SealHistoryHandler', () => {
  let world: AuditWorld;
  let config: ChronicleConfig;

  beforeEach(async () => {
    world = auditWorld();
    config = { auditSealKey: null, dataDir: world.dir } as ChronicleConfig;
    await world.append('customer-1', 'CustomerRegistered.v1', { customerId: 1, name: 'Nora' });
    await world.append('customer-1', 'CustomerChanged.v1', { customerId: 1, changes: { name: 'Nor' } });
  });
  afterEach(() => world.close());

  const seal = (on = config) => new SealHistoryHandler(world.store, on).execute();

  it('given a history that verifies, signs its head under a seal key made on first use', async () => {
    expect(existsSync(join(world.dir, SEAL_KEY_FILE))).toBe(false);
    const sealed = await seal();
    const [, last] = await world.store.readStream('customer-1');
    expect(sealed).toEqual({
      position: '2',
      hash: last.hash,
      recordedAt: last.recordedAt,
      signature: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(sealSignedBy(sealed, sealKey(config, false)!)).toBe(true);
    // The key is kept: the next seal is signed with the same one.
    expect((await seal()).signature).toBe(sealed.signature);
  });

  it('signs with AUDIT_SEAL_KEY when it is set', async () => {
    const key = randomBytes(32);
    expect(sealSignedBy(await seal({ ...config, auditSealKey: key }), key)).toBe(true);
  });

  it('seals no history that breaks, naming where', async () => {
    world.tamper(1, 'Nora', 'Anna');
    const refused = seal();
    await expect(refused).rejects.toBeInstanceOf(HistoryNotSealableError);
    await expect(refused).rejects.toMatchObject({
      code: 'history-broken',
      name: 'HistoryNotSealableError',
      message: 'The history is not sealed: the chain breaks at position 1',
    });
  });

  it('seals no empty history', async () => {
    const empty = auditWorld();
    try {
      await expect(
        new SealHistoryHandler(empty.store, { ...config, dataDir: empty.dir }).execute(),
      ).rejects.toMatchObject({ message: 'The history is not sealed: it holds no event' });
    } finally {
      await empty.close();
    }
  });
});
