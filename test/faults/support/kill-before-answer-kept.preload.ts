// Preloaded (-r) into an API process: a request that holds its
// Idempotency-Key and succeeded (its events are committed) kills the process with SIGKILL just
// before its answer is kept, as a crash between the append and the kept answer would.
import { builtModule } from '../../support/built';

type Source = typeof import('../../../apps/api/src/idempotency/idempotency-keys');
type IdempotencyKeys = InstanceType<Source['IdempotencyKeys']>;
const { IdempotencyKeys } = builtModule<Source>('apps/api/src/idempotency/idempotency-keys');

/** IdempotencyKeys.finish (private): (account, key, attempt, status, headers, payload). */
type Finish = (
  this: IdempotencyKeys,
  account: string,
  key: string,
  attempt: unknown,
  status: number,
  ...rest: unknown[]
) => Promise<void>;
const keys = IdempotencyKeys.prototype as unknown as { finish: Finish };
const finish = keys.finish;

keys.finish = function (this: IdempotencyKeys, account, key, attempt, status, ...rest) {
  if (status < 400) process.kill(process.pid, 'SIGKILL');
  return finish.call(this, account, key, attempt, status, ...rest);
};
