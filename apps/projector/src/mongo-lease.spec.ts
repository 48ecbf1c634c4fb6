import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Collection, MongoClient, MongoServerError } from 'mongodb';
import { MongoDouble, startMongoDouble } from '../../../test/doubles/mongo/mongo-double';
import { LeaseRecord, MongoLease, processOwnerId } from './mongo-lease';

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

  it('renews only what this instance acquired, even when another one names the same owner', async () => {
    await lease('a').tryAcquire();
    expect(await lease('a').renew()).toBe(false);
    expect(await leases.findOne({ _id: 'projector' })).toMatchObject({ owner: 'a', version: 1 });
  });

  it('is given back at once to its own owner, as after a restart that kept the owner id', async () => {
    const [a, again] = [lease('a'), lease('a')];
    await a.tryAcquire();
    expect(await again.tryAcquire()).toEqual({ acquired: true, tookOverFrom: null });
  });

  it('keeps leases of other names in the same collection apart', async () => {
    await new MongoLease(leases, { name: 'other', ttlMs: TTL, owner: 'z', now: () => clock }).tryAcquire();
    const a = lease('a');
    expect(await a.holder()).toBeNull();
    expect(await a.tryAcquire()).toEqual({ acquired: true, tookOverFrom: null });
    expect(await leases.findOne({ _id: 'other' })).toMatchObject({ owner: 'z', version: 1 });
  });

  it('stamps each renewal with when it expires: one TTL after it was renewed', async () => {
    const a = lease('a');
    await a.tryAcquire();
    await a.renew();
    const record = await leases.findOne({ _id: 'projector' });
    expect(record!.expiresAt.getTime() - record!.renewedAt.getTime()).toBe(TTL);
  });

  it('loses a race for a free lease to the contender that inserted first, naming it', async () => {
    // Between b's look (nothing there) and its insert, a takes the lease.
    const insert = leases.insertOne.bind(leases);
    jest.spyOn(leases, 'insertOne').mockImplementationOnce(async (...args) => {
      await lease('a').tryAcquire();
      return insert(...args);
    });
    const b = lease('b');
    expect(await b.tryAcquire()).toEqual({ acquired: false, holder: 'a' });
    expect(b.heldForMs).toBe(0);
  });

  it('says "another process" when the lease it lost a race for is gone again', async () => {
    const insert = leases.insertOne.bind(leases);
    jest.spyOn(leases, 'insertOne').mockImplementationOnce(async (...args) => {
      await lease('a').tryAcquire();
      // The look for its holder, in the duplicate-key path, finds none: deleted meanwhile.
      jest.spyOn(leases, 'findOne').mockImplementationOnce(async () => {
        await leases.deleteOne({ _id: 'projector' });
        return null;
      });
      return insert(...args);
    });
    expect(await lease('b').tryAcquire()).toEqual({ acquired: false, holder: 'another process' });
  });

  it('passes on any failure of its insert but a duplicate key, instead of reading it as a lost race', async () => {
    for (const failure of [
      new Error('connection reset'),
      new MongoServerError({ message: 'Document failed validation', code: 121 }),
    ]) {
      jest.spyOn(leases, 'insertOne').mockRejectedValueOnce(failure);
      await expect(lease('b').tryAcquire()).rejects.toBe(failure);
    }
  });

  it('refuses a TTL that is not positive', () => {
    for (const ttlMs of [0, -1, Number.NaN]) {
      expect(() => new MongoLease(leases, { name: 'projector', ttlMs })).toThrow(
        new RangeError('ttlMs must be positive'),
      );
    }
  });

  it('names this process by host, pid and a random suffix, so two processes never share an owner', () => {
    const owner = processOwnerId();
    expect(owner).toMatch(new RegExp(`^${hostname()}:${process.pid}:[0-9a-f]{8}$`));
    expect(processOwnerId()).not.toBe(owner);
    expect(new MongoLease(leases, { name: 'projector', ttlMs: TTL }).owner).toMatch(/^.+:\d+:[0-9a-f]{8}$/);
  });
});
