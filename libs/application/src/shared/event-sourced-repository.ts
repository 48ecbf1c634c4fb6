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
  SubjectErasedError,
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

/** A command as handle() was given it. */
interface Job<S, C, E extends DomainEvent> {
  decider: Decider<S, C, E>;
  stream: string;
  command: (state: S, now: Date) => NoInfer<C>;
  context: CommandContext;
  options: HandleOptions;
}

interface Folded {
  decider: Decider<unknown, never, never>;
  state: unknown;
  revision: number;
}

/**
 * Loads a stream into an aggregate's state, decides, and appends with optimistic concurrency.
 * Folded states of recent streams are kept, so a load reads only the events after the kept
 * revision: the store stays the truth (another process's appends are read like any other), and
 * a long stream costs no more to change than a short one. A command first decides on the kept
 * state without reading at all, and the append's revision check says whether it was current.
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
    const job: Job<S, C, E> = { decider, stream, command, context, options };
    return this.turns.run(stream, () =>
      traced('command', () => this.decideAndAppend(job), { attributes: { 'chronicle.stream': stream } }),
    );
  }

  private async decideAndAppend<S, C, E extends DomainEvent>(job: Job<S, C, E>): Promise<Handled<S, E>> {
    const onKept = await this.decideOnKept(job);
    if (onKept !== undefined) return onKept;
    const { decider, stream, command, options } = job;
    const maxAttempts = options.ifMatch === undefined ? (options.maxAttempts ?? CONFLICT_ATTEMPTS) : 1;
    for (let attempt = 1; ; attempt++) {
      const loaded = await this.load(decider, stream);
      const now = this.clock.now();
      // Decide first: an invalid command or a missing aggregate says so before any precondition.
      const events = this.decide(decider, command, loaded.state, now);
      if (options.ifMatch && (loaded.revision === null || !options.ifMatch.includes(loaded.revision))) {
        throw new PreconditionFailedError(loaded.revision);
      }
      if (events.length === 0) return { ...loaded, events, position: null };
      try {
        return await this.append(job, loaded, events, now);
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

  /**
   * The command decided on the state this process kept from its last load or append of the
   * stream, without reading it: the append at the kept revision is refused if another writer came
   * first. Only a write is answered this way. A refusal, "nothing changed", an If-Match the kept
   * revision does not meet, or a refused append: undefined, and the caller reads the stream and
   * decides again, so those are answered from the store, never from a state that may be behind it.
   * (The profile of PATCH had the read of the new events, none most of the time, at a sixth.)
   */
  private async decideOnKept<S, C, E extends DomainEvent>(
    job: Job<S, C, E>,
  ): Promise<Handled<S, E> | undefined> {
    const { decider, stream, command, options } = job;
    const kept = this.folded.get(stream);
    if (kept === undefined || kept.decider !== (decider as object)) return undefined;
    if (options.ifMatch !== undefined && !options.ifMatch.includes(kept.revision)) return undefined;
    const loaded = { state: kept.state as S, revision: kept.revision };
    const now = this.clock.now();
    let events: E[];
    try {
      events = this.decide(decider, command, loaded.state, now);
    } catch {
      return undefined;
    }
    if (events.length === 0) return undefined;
    try {
      return await this.append(job, loaded, events, now);
    } catch (error) {
      // Another writer appended (an erasure among them: its key may be gone before its event is read).
      if (error instanceof WrongExpectedRevisionError || error instanceof SubjectErasedError)
        return undefined;
      throw error;
    }
  }

  private decide<S, C, E extends DomainEvent>(
    decider: Decider<S, C, E>,
    command: (state: S, now: Date) => NoInfer<C>,
    state: S,
    now: Date,
  ): E[] {
    const decided = command(state, now);
    nameActiveSpan(`command ${(decided as { type?: string }).type ?? 'unknown'}`);
    return decider.decide(decided, state);
  }

  /** `events` appended at `loaded`'s revision, and the state after them kept. */
  private async append<S, C, E extends DomainEvent>(
    { decider, stream, context }: Job<S, C, E>,
    loaded: Loaded<S>,
    events: E[],
    now: Date,
  ): Promise<Handled<S, E>> {
    const result = await this.store.append(
      stream,
      events.map((event) => toNewEvent(event, context, now)),
      loaded.revision ?? 'no_stream',
    );
    const state = events.reduce((current, event) => decider.evolve(current, event), loaded.state);
    this.keep(stream, decider, state, result.nextExpectedRevision);
    return { state, revision: result.nextExpectedRevision, events, position: result.position };
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
