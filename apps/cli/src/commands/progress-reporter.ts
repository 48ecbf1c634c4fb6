import { Presets, SingleBar } from 'cli-progress';

/** JSON progress lines per second at most, when stderr is not a terminal. */
const LINE_INTERVAL_MS = 1000;

/** How far an operation has come: items done (events replayed, customers created) and the fraction of the whole. */
export interface Progress {
  done: number;
  fraction: number;
}

/**
 * Shows an operation's progress on stderr (stdout keeps only the result): a bar with the items
 * done, the rate and the time left on a terminal, else one JSON line a second.
 */
export class ProgressReporter {
  private readonly started = Date.now();
  private bar: SingleBar | null = null;
  private lastLine = 0;
  private last: Progress = { done: 0, fraction: 0 };

  /** `unit` names the items (`events`, `customers`) in the bar and the JSON lines. */
  constructor(
    private readonly unit: string,
    private readonly terminal = process.stderr.isTTY === true,
  ) {}

  update(progress: Progress): void {
    this.last = progress;
    const { done, fraction } = progress;
    const seconds = (Date.now() - this.started) / 1000;
    const perSecond = seconds > 0 ? Math.round(done / seconds) : 0;
    const secondsLeft = fraction > 0 ? Math.round((seconds * (1 - fraction)) / fraction) : null;
    if (this.terminal) {
      if (!this.bar) {
        this.bar = new SingleBar(
          {
            format: `{bar} {percentage}% | {done} ${this.unit} | {rate} ${this.unit}/s | {left} left`,
            stream: process.stderr,
            hideCursor: true,
          },
          Presets.shades_classic,
        );
        this.bar.start(1000, 0, { done: 0, rate: 0, left: '?' });
      }
      this.bar.update(Math.round(fraction * 1000), {
        done,
        rate: perSecond,
        left: secondsLeft === null ? '?' : `${secondsLeft}s`,
      });
      return;
    }
    const now = Date.now();
    if (now - this.lastLine < LINE_INTERVAL_MS) return;
    this.lastLine = now;
    const percent = Math.round(fraction * 1000) / 10;
    process.stderr.write(
      `${JSON.stringify({ progress: { [this.unit]: done, [`${this.unit}PerSecond`]: perSecond, percent, secondsLeft } })}\n`,
    );
  }

  /**
   * The operation finished with `done` items: on a terminal the bar's last frame shows 100%
   * (progress reports are throttled, so the last one seen may be well short of the end).
   */
  complete(done = this.last.done): void {
    if (this.terminal) this.update({ done, fraction: 1 });
    this.stop();
  }

  stop(): void {
    this.bar?.stop();
    this.bar = null;
  }
}
