import { resumePosition } from './checkpoints';
import { CheckpointBeyondHeadError, EventStore } from './event-store.port';
import { position, Position } from './position';

const endingAt = (end: Position | null) =>
  ({ endPosition: () => Promise.resolve(end) }) as unknown as EventStore;

describe('resumePosition', () => {
  const warnings: string[] = [];
  const warn = (message: string) => void warnings.push(message);
  beforeEach(() => (warnings.length = 0));

  it('resumes from a checkpoint within the log, up to its last record', async () => {
    await expect(resumePosition(endingAt(position(90)), 'c', position(40), warn)).resolves.toEqual(
      position(40),
    );
    await expect(resumePosition(endingAt(position(90)), 'c', position(90), warn)).resolves.toEqual(
      position(90),
    );
    await expect(resumePosition(endingAt(null), 'c', null, warn)).resolves.toBeNull();
    expect(warnings).toEqual([]);
  });

  it('takes (0, 0) as the start of the log, also of an empty one', async () => {
    await expect(resumePosition(endingAt(null), 'c', position(0), warn)).resolves.toEqual(position(0));
  });

  it('refuses a checkpoint beyond the last record, naming the consumer and projections rebuild', async () => {
    const refused = resumePosition(endingAt(position(90)), 'the projections', position(91), warn);
    await expect(refused).rejects.toBeInstanceOf(CheckpointBeyondHeadError);
    await expect(refused).rejects.toThrow(
      /the projections \(91\) lies beyond .*head 90.*projections rebuild/,
    );
    await expect(resumePosition(endingAt(null), 'c', position(5), warn)).rejects.toThrow(/the log is empty/);
  });

  it('takes a checkpoint no log can hold as absent, with a warning', async () => {
    await expect(
      resumePosition(endingAt(position(90)), 'c', position(2n ** 64n - 1n), warn),
    ).resolves.toBeNull();
    await expect(resumePosition(endingAt(position(90)), 'c', position(10n, 20n), warn)).resolves.toBeNull();
    expect(warnings).toEqual([
      'The stored checkpoint of c (18446744073709551615) names no position of any log (at or above 2^63); ' +
        'starting from the beginning',
      'The stored checkpoint of c (10:20) names no position of any log (commit before prepare); ' +
        'starting from the beginning',
    ]);
  });
});
