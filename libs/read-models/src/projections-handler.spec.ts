import { PermanentFailure, position, RecordedEvent } from '@chronicle/event-store';
import { recordSpans } from '@chronicle/tracing/testing';
import { MemoryReadStore } from './memory/memory-read-store';
import { ProjectionsHandler } from './projection-processor';
import { customersProjection } from './projections/customers.projection';
import { Projection } from './projections/projection';

const registered = (customerId: number, at: number): RecordedEvent => ({
  id: `event-${at}`,
  type: 'CustomerRegistered.v1',
  data: {
    customerId,
    name: `C${customerId}`,
    email: `c${customerId}@example.com`,
    createdon: '2026-01-01T00:00:00.000Z',
  },
  metadata: {
    actor: 'system',
    correlationId: 'c',
    causationId: null,
    occurredAt: '2026-01-01T00:00:00.000Z',
  },
  stream: `customer-${customerId}`,
  revision: 0,
  position: position(at),
  recordedAt: '2026-01-01T00:00:00.000Z',
  hash: 'a'.repeat(64),
});

/** The failure handle() throws, for its message and cause. */
function failure(act: () => void): PermanentFailure {
  let thrown: unknown;
  try {
    act();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(PermanentFailure);
  return thrown as PermanentFailure;
}

describe('ProjectionsHandler', () => {
  const exporter = recordSpans();
  let store: MemoryReadStore;

  beforeEach(() => {
    store = new MemoryReadStore();
  });

  const customerIds = async () =>
    (await store.listCustomers({ offset: 0, limit: 10 })).items.map((c) => c.id);

  it('applies the batch’s changes with its checkpoint in one call, in one span counting its events', async () => {
    const handler = new ProjectionsHandler(store, [customersProjection], 'models');
    const apply = jest.spyOn(store, 'applyBatch');
    handler.handle(registered(1, 1));
    handler.handle(registered(2, 2));

    await handler.commit(position(3));

    expect(apply).toHaveBeenCalledTimes(1);
    expect(apply.mock.calls[0][0].map((change) => change.id)).toEqual([1, 2]);
    expect(apply.mock.calls[0][1]).toEqual({ projection: 'models', position: position(3) });
    expect(await customerIds()).toEqual([1, 2]);
    expect(await handler.loadCheckpoint()).toEqual(position(3));
    expect(exporter.getFinishedSpans().map((span) => span.attributes)).toEqual([
      { 'chronicle.checkpoint': 'models', 'chronicle.events': 2 },
    ]);

    // The next batch starts empty.
    handler.handle(registered(3, 4));
    await handler.commit(position(4));
    expect(apply.mock.calls[1][0].map((change) => change.id)).toEqual([3]);
    expect(exporter.getFinishedSpans()[1].attributes['chronicle.events']).toBe(1);
  });

  it('forgets a discarded batch', async () => {
    const handler = new ProjectionsHandler(store, [customersProjection], 'models');
    handler.handle(registered(1, 1));
    handler.discard();
    handler.handle(registered(2, 2));

    await handler.commit(position(2));

    expect(await customerIds()).toEqual([2]);
    expect(exporter.getFinishedSpans()[0].attributes['chronicle.events']).toBe(1);
  });

  it('keeps the changes of a batch whose commit failed, for the retry', async () => {
    const handler = new ProjectionsHandler(store, [customersProjection], 'models');
    handler.handle(registered(1, 1));
    jest.spyOn(store, 'applyBatch').mockRejectedValueOnce(new Error('store down'));

    await expect(handler.commit(position(1))).rejects.toThrow('store down');
    await handler.commit(position(1));

    expect(await customerIds()).toEqual([1]);
  });

  it('parks an event of a type this build does not know, saying what to do', () => {
    const handler = new ProjectionsHandler(store, [customersProjection], 'models');

    const parked = failure(() => handler.handle({ ...registered(1, 1), type: 'CustomerMerged.v9' }));

    expect(parked.message).toBe(
      'CustomerMerged.v9 is not an event type this build knows (written by a newer build, and rolled back?): ' +
        'the read models lack whatever it changed. Run a build that knows it, then `projections rebuild`, ' +
        'then `projections parked drop` this message',
    );
  });

  it('parks an event a projection throws on, naming the projection, the event and the reason', async () => {
    const cause = new Error('boom');
    const throwing = (thrown: unknown): Projection => ({
      name: 'broken',
      collection: 'customers',
      eventTypes: ['CustomerRegistered.v1'],
      project: (event) => {
        if (event.stream !== 'customer-8') throw thrown;
        return [];
      },
    });
    const handler = new ProjectionsHandler(store, [customersProjection, throwing(cause)], 'models');
    const event = { ...registered(7, 5), position: { commit: 5n, prepare: 4n } };

    const parked = failure(() => handler.handle(event));
    expect(parked.message).toBe(
      'Projection broken failed on CustomerRegistered.v1 at 5:4 in customer-7: boom',
    );
    expect(parked.cause).toBe(cause);

    const odd = failure(() =>
      new ProjectionsHandler(store, [throwing('not an Error')], 'models').handle(registered(1, 1)),
    );
    expect(odd.message).toBe(
      'Projection broken failed on CustomerRegistered.v1 at 1 in customer-1: not an Error',
    );

    // Nothing of the failed event stays in the batch.
    handler.handle(registered(8, 6));
    const apply = jest.spyOn(store, 'applyBatch');
    await handler.commit(position(6));
    expect(apply.mock.calls[0][0].map((change) => change.id)).toEqual([8]);
    expect(exporter.getFinishedSpans()[0].attributes['chronicle.events']).toBe(1);
  });
});
