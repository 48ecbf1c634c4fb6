import { open, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import {
  comparePositions,
  EventStore,
  formatPosition,
  Position,
  position,
  readStoreId,
} from '@chronicle/event-store';
import { errorMessage, removeFileDurably, writeFileDurably } from '@chronicle/config';
import { Checkpoint } from '../../read-store.port';
import { MemoryReadStore, MemoryReadStoreImage, MemoryReadStoreObserver } from '../memory-read-store';
import { decodeSnapshot, encodeSnapshot, SnapshotOrigin, SnapshotRejectedError } from './snapshot-codec';
import { DEFAULT_SNAPSHOT_POLICY, pauseAfter, snapshotDue, SnapshotPolicyOptions } from './snapshot-policy';

/** The in-memory read models' snapshot, in DATA_DIR beside events.db. */
export const SNAPSHOT_FILE = 'read-models.snapshot';
/** `read-models.snapshot.<pid>.<random>.tmp`: a snapshot being written. */
const TEMP_FILE = /^read-models\.snapshot\.(\d+)\.[0-9a-f]+\.tmp$/;

/** The subset of Nest's LoggerService the snapshots write to. */
export interface SnapshotLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface ReadModelSnapshotsOptions {
  /** The embedded store's DATA_DIR: the snapshot lives there, tied to the store-id recorded there. */
  dataDir: string;
  /** The read models' checkpoint in the store. */
  checkpointName: string;
  logger: SnapshotLogger;
  policy?: Partial<SnapshotPolicyOptions>;
}

/**
 * Makes the in-memory read models survive a restart (embedded default): their contents and
 * checkpoint are written to one file in the background, as the policy says, and read back at
 * start, so a restart replays only the events after it. The file is written beside its final
 * name, fsynced, then renamed over it: a crash leaves the old snapshot or the new, never a mix.
 * A snapshot is used only when it is whole (its digest), of this store (store-id), and of this
 * history (its checkpoint within the log, on the event it was taken at); otherwise it is left
 * aside with a log line and the models are rebuilt from the events. A rebuild that replaces the
 * models deletes it.
 */
export class ReadModelSnapshots implements MemoryReadStoreObserver {
  private readonly file: string;
  private readonly policy: SnapshotPolicyOptions;
  /** The checkpoint of the last snapshot written or read; null: none. */
  private covered: Position | null = null;
  private writing: Promise<void> | null = null;
  /** The last checkpoint applied. */
  private latest: Position | null = null;
  private recheck: NodeJS.Timeout | null = null;
  private lastEndedAt = Number.NEGATIVE_INFINITY;
  private lastDurationMs = 0;
  private stopped = false;
  /**
   * Why the snapshot on disk must go before anything else is done with it: a batch deleted
   * documents (an erasure) it still holds, or the models it holds were replaced (a rebuild).
   */
  private removing: 'an erasure' | 'a rebuild' | null = null;
  /** The last removal started. */
  private removal: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: MemoryReadStore,
    private readonly eventStore: EventStore,
    private readonly options: ReadModelSnapshotsOptions,
  ) {
    this.file = join(options.dataDir, SNAPSHOT_FILE);
    this.policy = { ...DEFAULT_SNAPSHOT_POLICY, ...options.policy };
  }

  /**
   * Removes the snapshot durably (a rebuild, with or without a running server): a crash right
   * after cannot bring it back, and the next start replays every event.
   */
  static discard(dataDir: string): Promise<void> {
    return removeFileDurably(join(dataDir, SNAPSHOT_FILE));
  }

  /**
   * Loads the snapshot into the (empty) store when there is a usable one, then follows the
   * store's batches. Never throws: without a snapshot the models are rebuilt from the events.
   */
  async restore(): Promise<void> {
    await this.removeAbandonedFiles();
    const started = performance.now();
    const generation = this.store.generation;
    try {
      const decoded = await this.read();
      if (decoded !== null) {
        const problem = await this.mismatch(decoded.origin, decoded.image);
        if (problem !== null) {
          this.options.logger.warn(
            `Ignoring the read models' snapshot ${this.file}: ${problem}; rebuilding them from the events`,
          );
        } else if (this.store.restore(decoded.image, generation)) {
          this.covered = checkpointOf(decoded.image, this.options.checkpointName);
          this.options.logger.log(
            `Read models restored from ${this.file} (written ${decoded.writtenAt}) at position ` +
              `${this.describeCovered()}: ${decoded.image.customers.rows} customers, ${decoded.image.userCount} ` +
              `users in ${Math.round(performance.now() - started)} ms; replaying the events after it`,
          );
        }
      }
    } catch (error) {
      const reason = errorMessage(error);
      this.options.logger.warn(
        `Ignoring the read models' snapshot ${this.file}: ${reason}; rebuilding them from the events`,
      );
    }
    this.store.observe(this);
  }

  /**
   * MemoryReadStoreObserver: writes a snapshot in the background when one is due. After a batch
   * that deleted documents (an erasure), the snapshot on disk is removed at once, or as soon as
   * the write under way ends: an erased subject must not stay readable in the file. Removing it
   * costs the same whatever the models hold, where writing a new one costs their whole size (a
   * second at a million customers); the next is written when the policy would have written it
   * anyway, or at a graceful stop, and a crash before then replays every event.
   */
  applied(checkpoint: Checkpoint, removed: boolean): void {
    if (checkpoint.projection !== this.options.checkpointName) return;
    this.latest = checkpoint.position;
    if (removed) this.removing ??= 'an erasure';
    this.consider();
  }

  /**
   * Starts a write when one is due; when only the pause after the last write stands in the way,
   * looks again once it is over, so that a store gone quiet still gets its snapshot.
   */
  private consider(): void {
    if (this.removing !== null && this.writing === null) {
      const reason = this.removing;
      this.removing = null;
      this.removal = this.alone(() => this.remove(reason));
      return;
    }
    if (this.stopped || this.latest === null || this.writing !== null || this.recheck !== null) return;
    const state = {
      eventsSince: Number(this.latest.commit - (this.covered?.commit ?? 0n)),
      msSinceLast: performance.now() - this.lastEndedAt,
      lastDurationMs: this.lastDurationMs,
      writing: false,
    };
    if (snapshotDue(state, this.policy)) {
      void this.alone(() => this.write());
    } else if (snapshotDue({ ...state, msSinceLast: Number.POSITIVE_INFINITY }, this.policy)) {
      const wait = pauseAfter(state.lastDurationMs, this.policy) - state.msSinceLast;
      this.recheck = setTimeout(() => {
        this.recheck = null;
        this.consider();
      }, wait).unref();
    }
  }

  /**
   * Runs `work` on the file, one piece of work at a time, then looks again at what is due. The
   * promise never rejects: a write and a removal log their failures.
   */
  private alone(work: () => Promise<void>): Promise<void> {
    this.writing = work().finally(() => {
      this.writing = null;
      this.consider();
    });
    return this.writing;
  }

  /**
   * The snapshot holding documents since deleted, or models since replaced, goes, durably. After
   * an erasure `covered` stays: the next write comes when the policy would have written it anyway
   * (or at a graceful stop), so that an erasure sets off no write of the whole models.
   */
  private async remove(reason: 'an erasure' | 'a rebuild'): Promise<void> {
    try {
      await ReadModelSnapshots.discard(this.options.dataDir);
    } catch (error) {
      this.options.logger.error(`Could not remove ${this.file} after ${reason}: ${errorMessage(error)}`);
    }
  }

  /**
   * MemoryReadStoreObserver: the models were rebuilt; the snapshot of the old ones must not come
   * back. It goes at once, or as soon as the write under way ends; resolves once it is gone.
   */
  async replaced(): Promise<void> {
    this.covered = null;
    this.removing = 'a rebuild';
    this.consider();
    // Asked for behind a write under way: started when that write ends.
    while (this.removing !== null && this.writing !== null) await this.writing;
    await this.removal;
  }

  /**
   * Stops writing, after a last snapshot when the models are ahead of the one on disk (a graceful
   * stop, with the processor already stopped): the next start then replays nothing.
   */
  async stop(): Promise<void> {
    if (this.recheck !== null) clearTimeout(this.recheck);
    this.recheck = null;
    const stopping = !this.stopped;
    this.stopped = true;
    // A write, then the removal an erasure during it asked for.
    while (this.writing !== null) await this.writing;
    if (stopping && this.latest !== null && this.latest.commit > (this.covered?.commit ?? 0n)) {
      await this.write();
    }
    this.store.observe(null);
  }

  /** Waits for the writes and removals under way (tests, benchmarks). */
  async settled(): Promise<void> {
    while (this.writing !== null) await this.writing;
  }

  private async write(): Promise<void> {
    const started = performance.now();
    const generation = this.store.generation;
    let failed = false;
    try {
      const storeId = readStoreId(this.options.dataDir);
      if (storeId === null) throw new Error(`DATA_DIR has no store-id`);
      let covered: Position | null = null;
      let bytes = 0;
      let heldMs = 0;
      // The batches wait only while the contents are written out; the fsync comes after.
      const written = await writeFileDurably(
        this.file,
        (handle) =>
          this.store.holdStill(async (image) => {
            const held = performance.now();
            covered = checkpointOf(image, this.options.checkpointName);
            const origin = { storeId, anchorEventId: covered && (await this.eventIdAt(covered)) };
            bytes = await encodeSnapshot(image, origin, async (chunk) => {
              for (let at = 0; at < chunk.byteLength;) {
                at += (await handle.write(chunk, at, chunk.byteLength - at)).bytesWritten;
              }
            });
            heldMs = performance.now() - held;
          }),
        { keep: () => !this.stale(generation) },
      );
      if (!written || this.stale(generation)) return;
      this.covered = covered;
      this.options.logger.log(
        `Read models' snapshot written at position ${this.describeCovered()}: ${(bytes / 2 ** 20).toFixed(1)} MiB ` +
          `in ${Math.round(performance.now() - started)} ms (batches held ${Math.round(heldMs)} ms)`,
      );
    } catch (error) {
      this.options.logger.error(
        `Writing the read models' snapshot failed: ${errorMessage(error)}; ` +
          'a restart replays more events, nothing is lost',
      );
      failed = true;
    } finally {
      // A failure (a full disk) is tried again no sooner than after a long write.
      this.lastDurationMs = Math.max(performance.now() - started, failed ? 1000 : 0);
      this.lastEndedAt = performance.now();
    }
  }

  /** The models were replaced while the snapshot was written: it must not stay. */
  private stale(generation: number): boolean {
    if (generation === this.store.generation) return false;
    void this.replaced();
    return true;
  }

  private async read() {
    let handle;
    try {
      handle = await open(this.file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      return await decodeSnapshot({
        size,
        read: async (into, offset) => {
          for (let at = 0; at < into.byteLength;) {
            const { bytesRead } = await handle.read(into, at, into.byteLength - at, offset + at);
            if (bytesRead === 0) throw new SnapshotRejectedError('it ended early (torn?)');
            at += bytesRead;
          }
        },
      });
    } finally {
      await handle.close();
    }
  }

  /** Why a whole snapshot is not of this store's history, or null when it is. */
  private async mismatch(origin: SnapshotOrigin, image: MemoryReadStoreImage): Promise<string | null> {
    const storeId = readStoreId(this.options.dataDir);
    if (origin.storeId !== storeId) {
      return `it was taken of store ${origin.storeId}, and this is store ${storeId ?? '(none)'}`;
    }
    const at = checkpointOf(image, this.options.checkpointName);
    if (at === null) return 'it holds no checkpoint';
    const end = await this.eventStore.endPosition();
    if (end === null || comparePositions(at, end) > 0) {
      return `its checkpoint ${formatPosition(at)} lies beyond the end of the event log (${end === null ? 'empty' : formatPosition(end)})`;
    }
    const eventId = await this.eventIdAt(at);
    if (eventId !== origin.anchorEventId) {
      return `the event log holds another history: the event at ${formatPosition(at)} is not the one it was taken at`;
    }
    return null;
  }

  /** The id of the event at `at`, or null when none is there. */
  private async eventIdAt(at: Position): Promise<string | null> {
    if (at.commit === 0n) return null;
    for await (const event of this.eventStore.readAll({ after: position(at.commit - 1n), limit: 1 })) {
      return comparePositions(event.position, at) === 0 ? event.id : null;
    }
    return null;
  }

  /** Temporary files of writers that died (a crash mid-write); a running server's are left alone. */
  private async removeAbandonedFiles(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.options.dataDir);
    } catch {
      return;
    }
    for (const name of names) {
      const match = TEMP_FILE.exec(name);
      if (match === null) continue;
      const pid = Number(match[1]);
      if (pid !== process.pid && isAlive(pid)) continue;
      await unlink(join(this.options.dataDir, name)).catch(() => undefined);
    }
  }

  private describeCovered(): string {
    return this.covered === null ? 'none' : formatPosition(this.covered);
  }
}

function checkpointOf(image: MemoryReadStoreImage, name: string): Position | null {
  return image.checkpoints.find(([checkpoint]) => checkpoint === name)?.[1] ?? null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
