import { Presets, SingleBar } from 'cli-progress';
import { RebuildProgress } from '@chronicle/read-models';

/** JSON progress lines per second at most, when stderr is not a terminal. */
const LINE_INTERVAL_MS = 1000;

/**
 * Shows a replay's progress on stderr (stdout keeps only the result): a bar with events, events
 * per second and time left on a terminal, else one JSON line a second.
 */
export class ProgressReporter {
  private readonly started = Date.now();
  private bar: SingleBar | null = null;
  private lastLine = 0;

  constructor(private readonly terminal = process.stderr.isTTY === true) {}

  update({ events, fraction }: RebuildProgress): void {
    const seconds = (Date.now() - this.started) / 1000;
    const eventsPerSecond = seconds > 0 ? Math.round(events / seconds) : 0;
    const secondsLeft = fraction > 0 ? Math.round((seconds * (1 - fraction)) / fraction) : null;
    if (this.terminal) {
      if (!this.bar) {
        this.bar = new SingleBar(
          {
            format: '{bar} {percentage}% | {events} events | {rate} events/s | {left} left',
            stream: process.stderr,
            hideCursor: true,
          },
          Presets.shades_classic,
        );
        this.bar.start(1000, 0, { events: 0, rate: 0, left: '?' });
      }
      this.bar.update(Math.round(fraction * 1000), {
        events,
        rate: eventsPerSecond,
        left: secondsLeft === null ? '?' : `${secondsLeft}s`,
      });
      return;
    }
    const now = Date.now();
    if (now - this.lastLine < LINE_INTERVAL_MS) return;
    this.lastLine = now;
    const percent = Math.round(fraction * 1000) / 10;
    process.stderr.write(
      `${JSON.stringify({ progress: { events, eventsPerSecond, percent, secondsLeft } })}\n`,
    );
  }

  stop(): void {
    this.bar?.stop();
    this.bar = null;
  }
}
