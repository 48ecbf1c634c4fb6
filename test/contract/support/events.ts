import type { EventData, NewEvent, SubscriptionMessage } from '@chronicle/event-store';
import { randomUUID } from 'node:crypto';

export function newEvent(data: EventData = { value: randomUUID() }, type = 'ContractTested.v1'): NewEvent {
  return {
    id: randomUUID(),
    type,
    data,
    metadata: {
      actor: 'system',
      correlationId: randomUUID(),
      causationId: null,
      occurredAt: new Date().toISOString(),
    },
  };
}

export function newEvents(count: number): NewEvent[] {
  return Array.from({ length: count }, (_, i) => newEvent({ index: i }));
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** The iterator's next result, or a rejection naming what did not arrive in time. */
export async function nextWithin<T>(
  iterator: AsyncIterator<T>,
  ms: number,
  what = 'subscription message',
): Promise<IteratorResult<T>> {
  return within(iterator.next(), ms, what);
}

export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `condition` every 20 ms; rejects naming `what` if it does not hold within `ms`. */
export async function waitUntil(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Every message of one subscription, in order, until `done` holds for one of them. */
export async function pull(
  iterator: AsyncIterator<SubscriptionMessage>,
  done: (message: SubscriptionMessage) => boolean,
  ms = 5000,
): Promise<SubscriptionMessage[]> {
  const seen: SubscriptionMessage[] = [];
  const deadline = Date.now() + ms;
  for (;;) {
    const result = await nextWithin(iterator, Math.max(deadline - Date.now(), 1));
    if (result.done) throw new Error('the subscription ended early');
    seen.push(result.value);
    if (done(result.value)) return seen;
  }
}

/**
 * Pulls subscription messages until `done(message)` holds, keeping only `caught-up` and events of
 * `streams`: on a shared store other writers' events may interleave.
 */
export async function pullUntil(
  iterator: AsyncIterator<SubscriptionMessage>,
  streams: ReadonlySet<string>,
  done: (message: SubscriptionMessage) => boolean,
  ms = 5000,
): Promise<SubscriptionMessage[]> {
  const relevant = (message: SubscriptionMessage) =>
    message.kind === 'caught-up' || (message.kind === 'event' && streams.has(message.event.stream));
  const seen = await pull(iterator, (message) => relevant(message) && done(message), ms);
  return seen.filter(relevant);
}

/** `ev:<id>` per event, `caught-up` for the marker: easy to compare whole sequences. */
export function describeMessages(messages: SubscriptionMessage[]): string[] {
  return messages.map((m) => (m.kind === 'event' ? `ev:${m.event.id}` : 'caught-up'));
}
