import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { errorMessage } from '@chronicle/config';
import { ProcessorHost } from '@chronicle/event-store';
import { MongoLease } from './mongo-lease';

export type ProjectorOutcome = 'stopped' | 'lease-lost';

/**
 * Runs its processor host's work (projections, sagas) while this process holds the projector
 * lease, so that two projectors started by mistake never work at once: the second one waits, says
 * so in the log, and takes over when the first stops or stops renewing the lease.
 */
@Injectable()
export class Projector implements OnModuleDestroy {
  private readonly logger = new Logger(Projector.name);
  private stopping = false;
  private running: Promise<ProjectorOutcome> | null = null;
  private wake: (() => void) | null = null;

  constructor(
    @Inject(MongoLease) private readonly lease: MongoLease,
    @Inject(ProcessorHost) private readonly processors: ProcessorHost,
  ) {}

  /** Resolves `stopped` after a shutdown, or `lease-lost` when the workers had to stop because the lease was lost. */
  run(): Promise<ProjectorOutcome> {
    this.running ??= this.work();
    return this.running;
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
  }

  private async work(): Promise<ProjectorOutcome> {
    if (!(await this.acquire())) return 'stopped';
    let outcome: ProjectorOutcome = 'stopped';
    if (!this.stopping) {
      void this.processors.start().then(
        () =>
          this.logger.log(
            'Projector ready: the projections have caught up with the event store and follow live events',
          ),
        (error: unknown) => {
          // A processor stopped before it got going rejects; only other failures are news.
          if (!this.stopping) this.logger.error(`A projector worker failed to start: ${errorMessage(error)}`);
        },
      );
      outcome = await this.hold();
      this.stopping = true;
      await this.processors.stop();
    }
    try {
      await this.lease.release();
      if (outcome === 'stopped') this.logger.log(`Released the projector lease (${this.lease.owner})`);
    } catch (error) {
      this.logger.warn(
        `Could not release the projector lease: ${errorMessage(error)}; another projector takes over after ${this.lease.ttlMs} ms`,
      );
    }
    return outcome;
  }

  /** Waits until the lease is ours; false when stopped first. */
  private async acquire(): Promise<boolean> {
    let waitingFor: string | null = null;
    while (!this.stopping) {
      try {
        const attempt = await this.lease.tryAcquire();
        if (attempt.acquired) {
          this.logger.log(
            attempt.tookOverFrom === null
              ? `Acquired the projector lease as ${this.lease.owner}`
              : `Took over the projector lease from ${attempt.tookOverFrom}, which stopped renewing it, as ${this.lease.owner}`,
          );
          return true;
        }
        if (attempt.holder !== waitingFor) {
          waitingFor = attempt.holder;
          this.logger.warn(
            `Another projector (${attempt.holder}) holds the projector lease: this one (${this.lease.owner}) waits ` +
              `and writes nothing until that one stops or goes ${this.lease.ttlMs} ms without renewing the lease`,
          );
        }
      } catch (error) {
        this.logger.error(`Could not read the projector lease: ${errorMessage(error)}; retrying`);
      }
      await this.pause(this.renewEveryMs);
    }
    return false;
  }

  /** Renews the lease until stopped or until it is lost. */
  private async hold(): Promise<ProjectorOutcome> {
    while (!this.stopping) {
      await this.pause(this.renewEveryMs);
      if (this.stopping) break;
      try {
        // A renewal that hangs (server unreachable) must not let this process outlive its lease.
        const renewed = await this.beforeLeaseLapses(this.lease.renew());
        if (renewed === 'lapsed') {
          this.logger.error(
            `Could not renew the projector lease in time; stopping so that two projectors never write at once`,
          );
          return 'lease-lost';
        }
        if (!renewed) {
          this.logger.error(
            `Lost the projector lease to ${(await this.lease.holder().catch(() => null)) ?? 'another process'}; stopping`,
          );
          return 'lease-lost';
        }
      } catch (error) {
        if (this.lease.heldForMs === 0) {
          this.logger.error(
            `Could not renew the projector lease (${errorMessage(error)}); stopping so that two projectors never write at once`,
          );
          return 'lease-lost';
        }
        this.logger.warn(`Renewing the projector lease failed: ${errorMessage(error)}; retrying`);
      }
    }
    return 'stopped';
  }

  /** Three renewals per half TTL: a slow one leaves a third of the TTL for the next before the lease lapses. */
  private get renewEveryMs(): number {
    return Math.max(1, Math.floor(this.lease.ttlMs / 6));
  }

  private async beforeLeaseLapses<T>(promise: Promise<T>): Promise<T | 'lapsed'> {
    let timer: NodeJS.Timeout | undefined;
    const lapse = new Promise<'lapsed'>((resolve) => {
      timer = setTimeout(() => resolve('lapsed'), this.lease.heldForMs);
    });
    try {
      return await Promise.race([promise, lapse]);
    } finally {
      clearTimeout(timer);
      promise.catch(() => undefined);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
