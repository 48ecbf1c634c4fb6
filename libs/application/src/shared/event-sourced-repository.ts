import { Injectable } from '@nestjs/common';
import { backOffDelay, TurnQueue } from '@chronicle/config';
import { Decider, DomainEvent, unknownEventTypeReason, UnknownEventTypeError } from '@chronicle/domain';
import { activeTraceParent, nameActiveSpan, traced } from '@chronicle/tracing';
import {
  EventStore,
  formatPosition,
  NewEvent,
  Position,
  RecordedEvent,
  WrongExpectedRevisionError,
} from '@chronicle/event-store';
import { ConcurrencyConflictError, PreconditionFailedError } from './application-errors';
import { timeOrderedId } from './time-ordered-id';
import { Clock } from './clock';
import { CommandContext } from './command-context';

export interface Loaded<S> {
  state: S;
  /** Revision of the stream's last event; null when the stream does not exist. */
  revision: number | null;
}

export interface Handled<S, E> extends Loaded<S> {
  /** The events decide returned and that were appended (empty when nothing changed). */
  events: E[];
  /** Where the last appended event landed; null when nothing was appended. */
  position: Position | null;
}

export interface HandleOptions {
  /** If-Match: the stream must be at one of these revisions, or PreconditionFailedError. */
  ifMatch?: readonly number[];
  /** Attempts when a concurrent writer wins the race (each reloads and decides again). */
  maxAttempts?: number;
}

/**
 * The one place where stored (and already upcast) events become domain events. A type this build
 * does not know is refused: an aggregate's evolve would skip or misread it, and decide over a
 * state that is not the stream's.
 */
export function toDomainEvent<E extends DomainEvent>(event: RecordedEvent): E {
  if (unknownEventTypeReason(event.type) !== null) {
    throw new UnknownEventTypeError(event.type, event.stream, formatPosition(event.position));
  }
  return { type: event.type, data: event.data } as unknown as E;
}

/** A decider's state after `events` (stored ones, folded from `state`: its initial state by default). */
export function foldEvents<S, C, E extends DomainEvent>(
  decider: Decider<S, C, E>,
  events: readonly RecordedEvent[],
  state: S = decider.initialState,
): S {
  for (const event of events) state = decider.evolve(state, toDomainEvent<E>(event));
  return state;
}

export function toNewEvent(event: DomainEvent, context: CommandContext, now: Date): NewEvent {
  return {
    id: timeOrderedId(),
    type: event.type,
    data: event.data as Record<string, unknown>,
    metadata: {
      actor: context.actor,
      correlationId: context.correlationId,
      ...(context.clientRequestId ? { clientRequestId: context.clientRequestId } : {}),
      auth: context.auth,
      causationId: context.causationId ?? null,
      occurredAt: now.toISOString(),
      // The request (or saga step) that wrote it, when traced: from its events to its trace.
      ...activeTraceParent(),
    },
  };
}

/** Attempts at a command that a concurrent writer keeps beating (without If-Match). */
export const CONFLICT_ATTEMPTS = 10;

/**
 * Waits before deciding again after a conflict: exponential, with full jitter, so that writers in
 * several processes that collided do not collide again in step and exhaust their attempts.
 */
function conflictBackOff(attempt: number): Promise<void> {
  const delay = backOffDelay(attempt, { initialMs: 10, maxMs: 200, jitter: 'full' });
  return new Promise((resolve) => setTimeout(resolve, delay));
}

/** Streams whose folded state the repository keeps; the least recently used goes first. */
export const FOLDED_STREAMS = 10_000;

interface Folded {
  decider: Decider<unknown, never, never>;
  state: unknown;
  revision: number;
}

/**
 * Loads a stream into an aggregate's state, decides, and appends with optimistic concurrency.
 * Folded states of recent streams are kept, so a load reads only the events after the kept
 * revision: the store stays the truth (another process's appends are read like any other), and
 * a long stream costs no more to change than a short one.
 */
@Injectable()
export class EventSourcedRepository {
  /** Per stream, the commands queued on it in this process. */
  private readonly turns = new TurnQueue();
  private readonly folded = new Map<string, Folded>();

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async load<S, C, E extends DomainEvent>(decider: Decider<S, C, E>, stream: string): Promise<Loaded<S>> {
    const cached = this.folded.get(stream);
    const known = cached?.decider === (decider as object) ? cached : undefined;
    const events = await this.store.readStream(stream, known ? { fromRevision: known.revision + 1 } : {});
    const state = foldEvents(decider, events, known ? (known.state as S) : decider.initialState);
    const revision = events.length === 0 ? (known?.revision ?? null) : events[events.length - 1].revision;
    if (revision !== null) this.keep(stream, decider, state, revision);
    return { state, revision };
  }

  /**
   * Runs `command(state, now)` through decide and appends the events at the loaded revision.
   * A conflict reloads and decides again, a bounded number of times; under If-Match it is a 412.
   * Commands on one stream take turns within this process: concurrent ones would only conflict and
   * exhaust their retries against a remote store; the retries are left for other processes' writes.
   */
  handle<S, C, E extends DomainEvent>(
    decider: Decider<S, C, E>,
    stream: string,
    command: (state: S, now: Date) => NoInfer<C>,
    context: CommandContext,
    options: HandleOptions = {},
  ): Promise<Handled<S, E>> {
    return this.turns.run(stream, () =>
      traced('command', () => this.decideAndAppend(decider, stream, command, context, options), {
        attributes: { 'chronicle.stream': stream },
      }),
    );
  }

  private async decideAndAppend<S, C, E extends DomainEvent>(
    decider: Decider<S, C, E>,
    stream: string,
    command: (state: S, now: Date) => NoInfer<C>,
    context: CommandContext,
    options: HandleOptions,
  ): Promise<Handled<S, E>> {
    const maxAttempts = options.ifMatch === undefined ? (options.maxAttempts ?? CONFLICT_ATTEMPTS) : 1;
    for (let attempt = 1; ; attempt++) {
      const loaded = await this.load(decider, stream);
      const now = this.clock.now();
      // Decide first: an invalid command or a missing aggregate says so before any precondition.
      const decided = command(loaded.state, now);
      nameActiveSpan(`command ${(decided as { type?: string }).type ?? 'unknown'}`);
      const events = decider.decide(decided, loaded.state);
      if (options.ifMatch && (loaded.revision === null || !options.ifMatch.includes(loaded.revision))) {
        throw new PreconditionFailedError(loaded.revision);
      }
      if (events.length === 0) return { ...loaded, events, position: null };
      try {
        const result = await this.store.append(
          stream,
          events.map((event) => toNewEvent(event, context, now)),
          loaded.revision ?? 'no_stream',
        );
        const state = events.reduce((current, event) => decider.evolve(current, event), loaded.state);
        this.keep(stream, decider, state, result.nextExpectedRevision);
        return { state, revision: result.nextExpectedRevision, events, position: result.position };
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        if (options.ifMatch) {
          throw new PreconditionFailedError(error.actual === 'no_stream' ? null : error.actual);
        }
        if (attempt >= maxAttempts) throw new ConcurrencyConflictError(stream);
        await conflictBackOff(attempt);
      }
    }
  }

  private keep<S, C, E extends DomainEvent>(
    stream: string,
    decider: Decider<S, C, E>,
    state: S,
    revision: number,
  ): void {
    const kept = this.folded.get(stream);
    // Never step back: a slower load may finish after a newer append was kept.
    if (kept !== undefined && kept.decider === (decider as object) && kept.revision > revision) return;
    this.folded.delete(stream);
    if (this.folded.size >= FOLDED_STREAMS) {
      const oldest = this.folded.keys().next();
      if (!oldest.done) this.folded.delete(oldest.value);
    }
    this.folded.set(stream, { decider: decider as unknown as Folded['decider'], state, revision });
  }
}
