import { position, RecordedEvent } from '@chronicle/event-store';
import { followUpContext } from '../../shared/command-context';
import { CompleteErasureCommand } from './complete-erasure.command';
import { CompleteErasureHandler } from './complete-erasure.handler';
import type { ErasureCompletion } from './erasure-completion';

describe('CompleteErasureHandler', () => {
  it("completes the erasure an event records, as that event's follow-up", async () => {
    const complete = jest.fn<Promise<void>, Parameters<ErasureCompletion['complete']>>(() =>
      Promise.resolve(),
    );
    const handler = new CompleteErasureHandler({ complete } as unknown as ErasureCompletion);
    const erasure: RecordedEvent = {
      id: 'e-1',
      stream: 'user-u-1',
      revision: 3,
      position: position(12),
      type: 'SubjectErased.v1',
      data: { subject: 'user-u-1', kind: 'user', erasedAt: '2026-11-27T10:00:00.000Z' },
      metadata: {
        actor: 'a-admin',
        correlationId: 'c-1',
        causationId: null,
        occurredAt: '2026-11-27T10:00:00.000Z',
      },
      recordedAt: '2026-11-27T10:00:00.001Z',
      hash: 'a'.repeat(64),
    };

    await handler.execute(new CompleteErasureCommand(erasure));

    expect(complete).toHaveBeenCalledTimes(1);
    expect(complete).toHaveBeenCalledWith(erasure.data, followUpContext(erasure));
  });
});
