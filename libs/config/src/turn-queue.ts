/**
 * Work that takes turns per key (a stream): each piece starts once the one queued before it on the
 * same key has settled, whether it succeeded or failed; other keys go on meanwhile. A key is
 * forgotten once nothing is queued on it, so the queue holds only keys with work in hand.
 */
export class TurnQueue {
  /** Per key, the end of the work queued on it. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `work` after everything queued on `key` before it; resolves or rejects as `work` does. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** How many keys have work queued or running. */
  get size(): number {
    return this.tails.size;
  }
}
