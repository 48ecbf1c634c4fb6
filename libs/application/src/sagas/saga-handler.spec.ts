import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandBus, ICommand } from '@nestjs/cqrs';
import { ValidationError } from '@chronicle/domain';
import { PermanentFailure, position, RecordedEvent, SqliteCheckpointStore } from '@chronicle/event-store';
import { recordedEvent as recorded } from '@chronicle/event-store/testing';
import { MailRejectedError } from '@chronicle/mail';
import { Saga } from './password.saga';
import { SagaHandler } from './saga-processor';

class Handle implements ICommand {
  constructor(readonly event: RecordedEvent) {}
}

const saga: Saga = {
  name: 'saga:test',
  eventTypes: ['Wanted.v1'],
  commandFor: (event) => (event.type === 'Wanted.v1' ? new Handle(event) : null),
};

describe('SagaHandler', () => {
  let dir: string;
  let checkpoints: SqliteCheckpointStore;
  let execute: jest.Mock<Promise<void>, [ICommand]>;
  let handler: SagaHandler;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'saga-handler-'));
    checkpoints = SqliteCheckpointStore.open(join(dir, 'checkpoints.db'));
    execute = jest.fn<Promise<void>, [ICommand]>(() => Promise.resolve());
    handler = new SagaHandler(saga, { execute } as unknown as CommandBus, checkpoints);
  });
  afterEach(async () => {
    await checkpoints.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the command an event calls for through the command bus', async () => {
    const event = recorded('Wanted.v1');
    await handler.handle(event);
    expect(execute.mock.calls).toEqual([[new Handle(event)]]);
  });

  it('runs nothing for an event the saga has no work for', async () => {
    await handler.handle(recorded('Other.v1'));
    expect(execute).not.toHaveBeenCalled();
  });

  it.each([
    ['a domain refusal', new ValidationError([{ field: 'email', message: 'is not an address' }])],
    ['a bounced e-mail', new MailRejectedError(550, '550 5.1.1 mailbox unavailable')],
  ])(
    'turns %s into a permanent failure, with the same message and the refusal as its cause',
    async (_, refusal) => {
      execute.mockRejectedValue(refusal);
      const handled = handler.handle(recorded('Wanted.v1'));
      await expect(handled).rejects.toBeInstanceOf(PermanentFailure);
      await expect(handled).rejects.toMatchObject({ message: refusal.message, cause: refusal });
    },
  );

  it('lets any other failure through as it is, to be retried', async () => {
    const down = new Error('mail server down');
    execute.mockRejectedValue(down);
    await expect(handler.handle(recorded('Wanted.v1'))).rejects.toBe(down);
  });

  it('keeps its checkpoint in the checkpoint store under the saga’s name', async () => {
    expect(handler).toMatchObject({ name: 'saga:test', eventTypes: ['Wanted.v1'] });
    expect(await handler.loadCheckpoint()).toBeNull();
    await handler.commit(position(3));
    expect(await handler.loadCheckpoint()).toEqual(position(3));
    expect(await checkpoints.load('saga:test')).toEqual(position(3));
  });
});
