import { randomUUID } from 'node:crypto';
import { Collection, MongoClient } from 'mongodb';
import { MongoDouble, startMongoDouble } from '../../../test/doubles/mongo/mongo-double';
import { LeaseRecord, MongoLease } from './mongo-lease';

const TTL = 1_000;

describe('MongoLease', () => {
  let double: MongoDouble;
  let client: MongoClient;
  let leases: Collection<LeaseRecord>;
  let clock: number;

  const lease = (owner: string) =>
    new MongoLease(leases, { name: 'projector', ttlMs: TTL, owner, now: () => clock });

  beforeAll(async () => {
    double = await startMongoDouble();
    client = await MongoClient.connect(double.uri);
  });

  afterAll(async () => {
    await client.close();
    await double.stop();
  });

  beforeEach(() => {
    leases = client.db(`lease_${randomUUID().replaceAll('-', '')}`).collection<LeaseRecord>('leases');
    clock = 0;
  });

  it('is taken by the first contender and refused to the next, naming the holder', async () => {
    const [a, b] = [lease('a'), lease('b')];
    expect(await a.tryAcquire()).toEqual({ acquired: true, tookOverFrom: null });
    expect(await b.tryAcquire()).toEqual({ acquired: false, holder: 'a' });
    expect(a.heldForMs).toBe(TTL / 2);
    expect(b.heldForMs).toBe(0);
    expect(await leases.findOne({ _id: 'projector' })).toMatchObject({ owner: 'a', version: 1 });
  });

  it('goes to exactly one of two contenders racing for a free lease', async () => {
    const attempts = await Promise.all([lease('a').tryAcquire(), lease('b').tryAcquire()]);
    expect(attempts.filter((attempt) => attempt.acquired)).toHaveLength(1);
  });

  it('stays with a holder that keeps renewing, however long a contender waits', async () => {
    const [a, b] = [lease('a'), lease('b')];
    await a.tryAcquire();
    for (let i = 0; i < 10; i++) {
      expect(await b.tryAcquire()).toEqual({ acquired: false, holder: 'a' });
      clock += TTL / 2;
      expect(await a.renew()).toBe(true);
    }
    expect(a.heldForMs).toBe(TTL / 2);
  });

  it('is taken over once the holder has not renewed it for a whole TTL on the contender’s clock', async () => {
    const [a, b] = [lease('a'), lease('b')];
    await a.tryAcquire();
    expect(await b.tryAcquire()).toEqual({ acquired: false, holder: 'a' });
    clock += TTL - 1;
    expect(await b.tryAcquire()).toEqual({ acquired: false, holder: 'a' });
    expect(a.heldForMs).toBe(0);
    clock += 1;
    expect(await b.tryAcquire()).toEqual({ acquired: true, tookOverFrom: 'a' });
    expect(await leases.findOne({ _id: 'projector' })).toMatchObject({ owner: 'b', version: 2 });
    // The old holder learns it at its next renewal.
    expect(await a.renew()).toBe(false);
    expect(a.heldForMs).toBe(0);
  });

  it('counts the TTL from the last change a contender saw, not from its first look', async () => {
    const [a, b] = [lease('a'), lease('b')];
    await a.tryAcquire();
    await b.tryAcquire();
    clock += TTL - 1;
    await a.renew();
    expect(await b.tryAcquire()).toEqual({ acquired: false, holder: 'a' });
    clock += TTL - 1;
    expect(await b.tryAcquire()).toEqual({ acquired: false, holder: 'a' });
    clock += 1;
    expect(await b.tryAcquire()).toEqual({ acquired: true, tookOverFrom: 'a' });
  });

  it('is taken by one contender only when two see it expire together', async () => {
    const contenders = [lease('a'), lease('b'), lease('c')];
    await contenders[0].tryAcquire();
    await Promise.all(contenders.slice(1).map((contender) => contender.tryAcquire()));
    clock += TTL;
    const attempts = await Promise.all(contenders.slice(1).map((contender) => contender.tryAcquire()));
    expect(attempts.filter((attempt) => attempt.acquired)).toHaveLength(1);
  });

  it('is free at once after a release, and a release by a former holder changes nothing', async () => {
    const [a, b] = [lease('a'), lease('b')];
    await a.tryAcquire();
    await a.release();
    expect(a.heldForMs).toBe(0);
    expect(await b.tryAcquire()).toEqual({ acquired: true, tookOverFrom: null });
    await a.release();
    expect(await b.holder()).toBe('b');
    expect(await b.renew()).toBe(true);
  });

  it('refuses a renewal before it was ever acquired', async () => {
    expect(await lease('a').renew()).toBe(false);
  });
});
