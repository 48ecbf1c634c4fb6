/**
 * What reading one personal value costs the store's read path, crypto only (no store, no SQLite):
 * decryptPersonalValue (one AES-256-GCM open through Node's crypto, under a KeyObject), a data
 * key's unwrap (DataKeyWrapper: one more open), createSecretKey (the key ring's import of each
 * key), and for comparison WebCrypto's subtle.decrypt of the same value (its process CPU: the
 * work runs on libuv's threads). A replay pays one unwrap and the import per subject, and one
 * open per personal value; the rebuild's budget per customer is in bench/README.md.
 * Usage: SWC_NODE_PROJECT=tsconfig.json node -r @swc-node/register bench/tools/personal-value-cost.ts
 * (OPS, ROUNDS: 200000, 5 unless set).
 */
import { createSecretKey, randomBytes, webcrypto } from 'node:crypto';
import {
  DataKeyWrapper,
  decryptPersonalValue,
  encryptPersonalValue,
  type DataSubject,
} from '@chronicle/event-store';
import { positiveEnv } from '../support/load';
import { spread } from '../support/stats';

const OPS = positiveEnv('OPS', 200_000);
const ROUNDS = positiveEnv('ROUNDS', 5);

const subject: DataSubject = { kind: 'customer', id: '123456' };
const raw = randomBytes(32);
const key = createSecretKey(raw);
const sealed = encryptPersonalValue(key, subject, 'name', 'Ada Lovelace the Second');
const wrapper = new DataKeyWrapper(randomBytes(32));
const wrapped = wrapper.wrap('customer-123456', raw);

/** Microseconds of process CPU (user and system, every thread) per operation: `calls` calls of `run`, each doing `per`. */
async function cost(run: () => unknown, calls: number, per: number): Promise<number> {
  const started = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    const done = run();
    if (done instanceof Promise) await done;
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / (calls * per);
}

async function main(): Promise<void> {
  const subtleKey = await webcrypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['decrypt', 'encrypt']);
  const iv = randomBytes(12);
  const aad = Buffer.from('context');
  const subtleSealed = await webcrypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: aad },
    subtleKey,
    raw,
  );
  // A thousand decrypts in flight at once, as a batch of a replay would ask them.
  const subtleBatch = () =>
    Promise.all(
      Array.from({ length: 1000 }, () =>
        webcrypto.subtle.decrypt({ name: 'AES-GCM', iv, additionalData: aad }, subtleKey, subtleSealed),
      ),
    );
  const steps: Array<[string, () => unknown, number]> = [
    ['decryptPersonalValue (one open)', () => decryptPersonalValue(key, subject, 'name', sealed), 1],
    ['DataKeyWrapper.unwrap (one open)', () => wrapper.unwrap('customer-123456', wrapped), 1],
    ['createSecretKey', () => createSecretKey(raw), 1],
    ['subtle.decrypt (process CPU)', subtleBatch, 1000],
  ];
  const results = new Map<string, number[]>(steps.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run, per] of steps) results.get(name)!.push(await cost(run, Math.ceil(OPS / per), per));
  }
  for (const [name, values] of results) {
    const { median, min, max } = spread(values);
    console.log(`${name}: ${median.toFixed(2)} µs (${min.toFixed(2)}–${max.toFixed(2)})`);
  }
}

void main();
