/**
 * `event_store.client.streams.Streams`: Read (reads and catch-up subscriptions), Append and
 * BatchAppend, answering the way a single EventStoreDB node does.
 */
import { randomUUID } from 'node:crypto';
import {
  Metadata,
  ServerDuplexStream,
  ServerErrorResponse,
  ServerReadableStream,
  ServerWritableStream,
  sendUnaryData,
  status,
} from '@grpc/grpc-js';
import {
  AppendReq,
  AppendResp,
  BatchAppendReq,
  BatchAppendResp,
  ReadReq,
  ReadResp,
} from '@eventstore/db-client/generated/streams_pb';
import {
  AllStreamPosition,
  BadRequest,
  Empty,
  MaximumAppendSizeExceeded,
  Timeout,
  UUID,
  WrongExpectedVersion,
} from '@eventstore/db-client/generated/shared_pb';
import { Status } from '@eventstore/db-client/generated/status_pb';
import { Code } from '@eventstore/db-client/generated/code_pb';
import { Any } from 'google-protobuf/google/protobuf/any_pb';
import { Empty as GoogleEmpty } from 'google-protobuf/google/protobuf/empty_pb';
import {
  AppendOutcome,
  comparePositions,
  EsdbLog,
  ExpectedState,
  LogPosition,
  ProposedEvent,
  StoredEvent,
} from './esdb-log';
import { parsePosition, parseUuid, readEvent, streamIdentifier, streamName } from './wire';

/** The server's default search window for filtered reads and subscriptions. */
const DEFAULT_FILTER_WINDOW = 32;
/** What a 24.x server sends for "before the log": (-1, -1) as unsigned 64-bit numbers. */
const BEFORE_THE_LOG = (2n ** 64n - 1n).toString();
/** Positions are signed 64-bit numbers on the server: it fails on anything larger. */
const POSITION_LIMIT = 2n ** 63n;

/**
 * Behaviours of real servers that lose events if a client takes checkpoints at their word
 * (docs/esdb-double.md). Off unless asked for.
 */
export type EsdbQuirk =
  /**
   * EventStoreDB 24.2 to 24.10.4 (fixed by KurrentDB PR 4892): a filtered `$all` subscription from
   * the start, when nothing in the log matches and the log is shorter than the checkpoint interval,
   * gets a checkpoint of (2^64-1, 2^64-1) as it goes live.
   */
  | 'esdb-24.2-to-24.10.4'
  /**
   * Before KurrentDB PR 4975 (and its cherry-picks): after an empty page read, a filtered `$all`
   * subscription going live gets a checkpoint equal to the end of the log, where the next event
   * will be written. The double sends it at every transition to live.
   */
  | 'end-of-log-checkpoint'
  /**
   * Checkpoints at catch-up page boundaries (every CATCH_UP_PAGE events scanned) and at the end of
   * catch-up, written right behind the page's matching events, which are then still in flight.
   */
  | 'catch-up-page-checkpoints';

export const ESDB_QUIRKS: readonly EsdbQuirk[] = [
  'esdb-24.2-to-24.10.4',
  'end-of-log-checkpoint',
  'catch-up-page-checkpoints',
];

/** Events a catch-up page holds, for 'catch-up-page-checkpoints'. */
export const CATCH_UP_PAGE = 20;

/** Transient cluster errors a call can meet; see EsdbDouble.failAppends and failReads. */
export type AppendFault = 'not-leader' | 'unavailable' | 'deadline-exceeded';

export interface PlannedFault {
  fault: AppendFault;
  /** Fail after writing (the answer is lost on the way), not before. */
  afterWrite: boolean;
}

export interface StreamsServiceOptions {
  log: EsdbLog;
  /** When false, BatchAppend answers UNIMPLEMENTED, as on servers before 21.10. */
  batchAppend: boolean;
  /** Bytes of data and metadata one append may carry (the server's MaxAppendSize). */
  maxAppendSize: number;
  /** Counts calls per method name, so tests can tell which path the client took. */
  countCall(method: string): void;
  quirks: ReadonlySet<EsdbQuirk>;
  /** Where the double listens, for NotLeader answers (which name the leader). */
  address(): { host: string; port: number };
}

/** A live subscription call the double can cut, to simulate drops. */
export interface ActiveSubscription {
  /** Ends the call with `code` (OK ends it cleanly). */
  drop(code: status): void;
  /** Stops serving it without a word, as when the server dies. */
  abandon(): void;
}

type Filter = (event: StoredEvent) => boolean;

interface PendingBatch {
  correlationId: UUID;
  options: BatchAppendReq.Options;
  events: ProposedEvent[];
}

/** A malformed request: INVALID_ARGUMENT, with the `exception` metadata the client maps. */
class InvalidRequest extends Error {
  constructor(
    message: string,
    readonly metadata = new Metadata(),
  ) {
    super(message);
  }
}

/** An exception inside the server: INTERNAL, as an unhandled exception is. */
class ServerFailure extends Error {}

function failure(code: status, details: string, metadata = new Metadata()): ServerErrorResponse {
  return Object.assign(new Error(details), { code, details, metadata });
}

function exceptionMetadata(exception: string, extra: Record<string, string> = {}): Metadata {
  const metadata = new Metadata();
  metadata.set('exception', exception);
  for (const [key, value] of Object.entries(extra)) metadata.set(key, value);
  return metadata;
}

export class StreamsService {
  readonly subscriptions = new Set<ActiveSubscription>();
  /** Faults the next appends meet, one each, in order. */
  readonly plannedFaults: PlannedFault[] = [];
  /** Faults the next reads (not subscriptions) meet, one each, in order. */
  readonly plannedReadFaults: AppendFault[] = [];

  constructor(private readonly options: StreamsServiceOptions) {}

  /** The handler object for `server.addService(StreamsService, ...)`. */
  handlers() {
    return {
      read: (call: ServerWritableStream<ReadReq, ReadResp>) => this.read(call),
      append: (call: ServerReadableStream<AppendReq, AppendResp>, callback: sendUnaryData<AppendResp>) =>
        this.append(call, callback),
      batchAppend: (call: ServerDuplexStream<BatchAppendReq, BatchAppendResp>) => this.batchAppend(call),
      delete: (_call: unknown, callback: sendUnaryData<never>) =>
        callback(failure(status.UNIMPLEMENTED, 'Delete is not modelled by the test double')),
      tombstone: (_call: unknown, callback: sendUnaryData<never>) =>
        callback(failure(status.UNIMPLEMENTED, 'Tombstone is not modelled by the test double')),
    };
  }

  // ---- Read ----------------------------------------------------------------------------------

  private read(call: ServerWritableStream<ReadReq, ReadResp>): void {
    this.options.countCall(call.request.getOptions()?.hasSubscription() ? 'Subscribe' : 'Read');
    const session = new CallSession(call);
    const run = call.request.getOptions()?.hasSubscription()
      ? this.subscribe(session)
      : this.readOnce(session);
    run.catch((error: unknown) => session.failWith(toServiceError(error)));
  }

  private async readOnce(session: CallSession): Promise<void> {
    const fault = this.plannedReadFaults.shift();
    if (fault) return session.failWith(this.faultError(fault));
    const options = requireOptions(session.call.request);
    const structured = options.getUuidOption()?.hasStructured() ?? false;
    const backwards = options.getReadDirection() === ReadReq.Options.ReadDirection.BACKWARDS;
    let remaining = options.hasCount() ? BigInt(options.getCount()) : BigInt(Number.MAX_SAFE_INTEGER);

    let events: readonly StoredEvent[];
    let indexes: Iterable<number>;
    let filter: Filter = () => true;
    if (options.hasStream()) {
      const streamOptions = options.getStream()!;
      const name = streamName(streamOptions.getStreamIdentifier());
      const stream = this.options.log.stream(name);
      if (!stream) {
        await session.write(
          new ReadResp().setStreamNotFound(
            new ReadResp.StreamNotFound().setStreamIdentifier(streamIdentifier(name)),
          ),
        );
        return session.end();
      }
      events = stream;
      const last = stream.length - 1;
      const from = streamOptions.hasStart()
        ? 0
        : streamOptions.hasEnd()
          ? backwards
            ? last
            : stream.length
          : Math.min(Number(BigInt(streamOptions.getRevision())), backwards ? last : stream.length);
      indexes = backwards ? range(from, -1) : range(from, stream.length);
    } else if (options.hasAll()) {
      const allOptions = options.getAll()!;
      events = this.options.log.events();
      const length = events.length;
      // Forwards reads include the event at the position; backwards reads return what precedes it.
      const from = allOptions.hasStart()
        ? 0
        : allOptions.hasEnd()
          ? length
          : this.options.log.indexAtOrAfter(this.readablePosition(allOptions.getPosition()));
      indexes = backwards ? range((allOptions.hasStart() ? 0 : from) - 1, -1) : range(from, length);
      if (options.hasFilter()) filter = compileFilter(options.getFilter()!);
    } else {
      throw new InvalidRequest('read options need a stream or $all');
    }

    for (const index of indexes) {
      if (remaining <= 0n || session.stopped) break;
      const event = events[index];
      if (!filter(event)) continue;
      await session.write(readEvent(event, structured));
      remaining -= 1n;
    }
    session.end();
  }

  private async subscribe(session: CallSession): Promise<void> {
    const options = requireOptions(session.call.request);
    const structured = options.getUuidOption()?.hasStructured() ?? false;
    const log = this.options.log;

    let source: () => readonly StoredEvent[];
    let cursor: number;
    let filter: Filter = () => true;
    let checkpointEvery = 0;
    if (options.hasStream()) {
      const streamOptions = options.getStream()!;
      const name = streamName(streamOptions.getStreamIdentifier());
      source = () => log.stream(name) ?? [];
      // Subscriptions start after the revision they are given.
      cursor = streamOptions.hasStart()
        ? 0
        : streamOptions.hasEnd()
          ? source().length
          : Number(BigInt(streamOptions.getRevision())) + 1;
    } else if (options.hasAll()) {
      const allOptions = options.getAll()!;
      source = () => log.events();
      if (allOptions.hasStart()) cursor = 0;
      else if (allOptions.hasEnd()) cursor = log.events().length;
      else {
        const after = this.readablePosition(allOptions.getPosition());
        cursor = log.indexAtOrAfter(after);
        if (cursor < log.events().length && comparePositions(log.events()[cursor].position, after) === 0)
          cursor++;
      }
      if (options.hasFilter()) {
        const filterOptions = options.getFilter()!;
        filter = compileFilter(filterOptions);
        const window = filterOptions.hasMax() ? filterOptions.getMax() : DEFAULT_FILTER_WINDOW;
        checkpointEvery = window * Math.max(1, filterOptions.getCheckpointintervalmultiplier());
      }
    } else {
      throw new InvalidRequest('subscription options need a stream or $all');
    }

    let wake: (() => void) | null = null;
    const unlisten = log.onAppend(() => wake?.());
    const subscription: ActiveSubscription = {
      drop: (code) => session.fail(code, 'Subscription dropped'),
      abandon: () => session.abandon(),
    };
    this.subscriptions.add(subscription);
    session.onStop(() => {
      unlisten();
      this.subscriptions.delete(subscription);
      wake?.();
    });

    await session.write(
      new ReadResp().setConfirmation(new ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID())),
    );
    const quirks = this.options.quirks;
    const filtered = checkpointEvery > 0;
    const fromStart = options.getAll()?.hasStart() ?? false;
    const checkpoint = (commit: string, prepare: string) =>
      session.write(
        new ReadResp().setCheckpoint(
          new ReadResp.Checkpoint().setCommitPosition(commit).setPreparePosition(prepare),
        ),
      );
    let caughtUp = false;
    let scanned = 0;
    let matched = 0;
    let lastScanned: StoredEvent | null = null;
    while (!session.stopped) {
      const events = source();
      while (cursor < events.length && !session.stopped) {
        const event = events[cursor++];
        scanned++;
        lastScanned = event;
        if (filter(event)) {
          matched++;
          await session.write(readEvent(event, structured));
        }
        const windowEnd = filtered && scanned % checkpointEvery === 0;
        const pageEnd =
          filtered && !caughtUp && quirks.has('catch-up-page-checkpoints') && scanned % CATCH_UP_PAGE === 0;
        if (windowEnd || pageEnd) {
          await checkpoint(event.position.commit.toString(), event.position.prepare.toString());
        }
      }
      if (session.stopped) break;
      if (!caughtUp) {
        caughtUp = true;
        if (filtered && quirks.has('catch-up-page-checkpoints') && lastScanned) {
          const { commit, prepare } = lastScanned.position;
          await checkpoint(commit.toString(), prepare.toString());
        }
        if (filtered && quirks.has('end-of-log-checkpoint')) {
          const end = log.end();
          await checkpoint(end.commit.toString(), end.prepare.toString());
        }
        if (
          filtered &&
          fromStart &&
          matched === 0 &&
          scanned < checkpointEvery &&
          quirks.has('esdb-24.2-to-24.10.4')
        ) {
          await checkpoint(BEFORE_THE_LOG, BEFORE_THE_LOG);
        }
        await session.write(new ReadResp().setCaughtUp(new ReadResp.CaughtUp()));
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (source().length > cursor || session.stopped) resolve();
      });
      wake = null;
    }
  }

  // ---- Append (unary, client streaming) -----------------------------------------------------

  private append(
    call: ServerReadableStream<AppendReq, AppendResp>,
    callback: sendUnaryData<AppendResp>,
  ): void {
    this.options.countCall('Append');
    let header: AppendReq.Options | undefined;
    const events: ProposedEvent[] = [];
    let failed = false;
    const fail = (error: ServerErrorResponse) => {
      if (failed) return;
      failed = true;
      callback(error);
    };
    call.on('data', (request: AppendReq) => {
      if (failed) return;
      try {
        if (request.hasOptions()) {
          if (header) throw new InvalidRequest('options sent twice');
          header = request.getOptions();
        } else if (request.hasProposedMessage()) {
          if (!header) throw new InvalidRequest('options must come first');
          events.push(proposedEvent(request.getProposedMessage()!));
        }
      } catch (error) {
        fail(toServiceError(error));
      }
    });
    call.on('end', () => {
      if (failed) return;
      try {
        if (!header) throw new InvalidRequest('options are required');
        if (payloadSize(events) > this.options.maxAppendSize) {
          throw new InvalidRequest(
            `Maximum Append Size of ${this.options.maxAppendSize} Exceeded.`,
            exceptionMetadata('maximum-append-size-exceeded', {
              'maximum-append-size': String(this.options.maxAppendSize),
            }),
          );
        }
        const expected = appendExpected(header);
        const planned = this.plannedFaults.shift();
        if (planned && !planned.afterWrite) return fail(this.faultError(planned.fault));
        const outcome = this.options.log.append(streamName(header.getStreamIdentifier()), expected, events);
        if (planned) return fail(this.faultError(planned.fault));
        callback(null, appendResponse(outcome, expected));
      } catch (error) {
        fail(toServiceError(error));
      }
    });
    // Nobody is left to answer once the client cancels.
    call.on('cancelled', () => {
      failed = true;
    });
  }

  // ---- BatchAppend (bidirectional) ----------------------------------------------------------

  private batchAppend(call: ServerDuplexStream<BatchAppendReq, BatchAppendResp>): void {
    this.options.countCall('BatchAppend');
    if (!this.options.batchAppend) {
      call.emit('error', failure(status.UNIMPLEMENTED, 'BatchAppend is not supported by this server'));
      return;
    }
    const pending = new Map<string, PendingBatch>();
    call.on('data', (request: BatchAppendReq) => {
      const correlationId = request.getCorrelationId();
      if (!correlationId) {
        call.emit('error', failure(status.INVALID_ARGUMENT, 'correlation_id is required'));
        return;
      }
      const key = parseUuid(correlationId);
      let batch = pending.get(key);
      if (!batch) {
        const options = request.getOptions();
        if (!options) {
          call.emit('error', failure(status.INVALID_ARGUMENT, 'the first request of a batch needs options'));
          return;
        }
        batch = { correlationId, options, events: [] };
        pending.set(key, batch);
      }
      try {
        for (const message of request.getProposedMessagesList()) batch.events.push(proposedEvent(message));
        if (!request.getIsFinal()) return;
        pending.delete(key);
        const planned = this.plannedFaults.shift();
        if (planned && !planned.afterWrite) {
          call.emit('error', this.faultError(planned.fault));
          return;
        }
        const response = this.completeBatch(batch);
        if (planned) call.emit('error', this.faultError(planned.fault));
        else call.write(response);
      } catch (error) {
        pending.delete(key);
        call.write(
          batchError(
            batch,
            Code.INVALID_ARGUMENT,
            errorMessage(error),
            packAny(new BadRequest().setMessage(errorMessage(error)), 'BadRequest'),
          ),
        );
      }
    });
    call.on('end', () => call.end());
    call.on('cancelled', () => pending.clear());
  }

  /**
   * How a node answers a call it cannot serve: NotLeader names the leader (NOT_FOUND with the
   * `exception` trailer the client maps); the others are bare gRPC statuses.
   */
  private faultError(fault: AppendFault): ServerErrorResponse {
    switch (fault) {
      case 'not-leader': {
        const { host, port } = this.options.address();
        return failure(
          status.NOT_FOUND,
          'Leader info available',
          exceptionMetadata('not-leader', {
            'leader-endpoint-host': host,
            'leader-endpoint-port': String(port),
          }),
        );
      }
      case 'unavailable':
        return failure(status.UNAVAILABLE, 'Server is not ready');
      case 'deadline-exceeded':
        return failure(status.DEADLINE_EXCEEDED, 'Deadline Exceeded');
    }
  }

  /**
   * A `$all` position as the server takes it: one it cannot hold makes it fail (INTERNAL), one
   * inside a record is INVALID_ARGUMENT.
   */
  private readablePosition(position: ReadReq.Options.Position | undefined): LogPosition {
    const parsed = positionOf(position);
    if (
      parsed.commit >= POSITION_LIMIT ||
      parsed.prepare >= POSITION_LIMIT ||
      parsed.commit < parsed.prepare
    ) {
      throw new ServerFailure(`Invalid position ${parsed.commit}/${parsed.prepare}`);
    }
    if (!this.options.log.startsRecord(parsed)) {
      throw new InvalidRequest(`Invalid position: no record starts at ${parsed.commit}/${parsed.prepare}`);
    }
    return parsed;
  }

  private completeBatch(batch: PendingBatch): BatchAppendResp {
    const deadline = batch.options.getDeadline();
    if (deadline && deadline.toDate().getTime() < Date.now()) {
      return batchError(batch, Code.DEADLINE_EXCEEDED, 'Timeout', packAny(new Timeout(), 'Timeout'));
    }
    if (payloadSize(batch.events) > this.options.maxAppendSize) {
      return batchError(
        batch,
        Code.INVALID_ARGUMENT,
        'Maximum Append Size Exceeded',
        packAny(
          new MaximumAppendSizeExceeded().setMaxappendsize(this.options.maxAppendSize),
          'MaximumAppendSizeExceeded',
        ),
      );
    }
    const expected = batchExpected(batch.options);
    const outcome = this.options.log.append(
      streamName(batch.options.getStreamIdentifier()),
      expected,
      batch.events,
    );
    if (outcome.kind === 'wrong_expected_version') {
      const details = new WrongExpectedVersion();
      if (outcome.currentRevision === null) details.setCurrentNoStream(new GoogleEmpty());
      else details.setCurrentStreamRevision(outcome.currentRevision.toString());
      switch (expected.kind) {
        case 'any':
          details.setExpectedAny(new GoogleEmpty());
          break;
        case 'no_stream':
          details.setExpectedNoStream(new GoogleEmpty());
          break;
        case 'stream_exists':
          details.setExpectedStreamExists(new GoogleEmpty());
          break;
        case 'revision':
          details.setExpectedStreamPosition(expected.revision.toString());
          break;
      }
      return batchError(
        batch,
        Code.FAILED_PRECONDITION,
        'WrongExpectedVersion',
        packAny(details, 'WrongExpectedVersion'),
      );
    }
    const success = new BatchAppendResp.Success();
    if (outcome.currentRevision === null) success.setNoStream(new GoogleEmpty());
    else success.setCurrentRevision(outcome.currentRevision.toString());
    if (outcome.position === null) success.setNoPosition(new GoogleEmpty());
    else
      success.setPosition(
        new AllStreamPosition()
          .setCommitPosition(outcome.position.commit.toString())
          .setPreparePosition(outcome.position.prepare.toString()),
      );
    return batchResponse(batch).setSuccess(success);
  }
}

/** One server-streaming call: ordered writes with back-pressure, and a single way to finish. */
class CallSession {
  stopped = false;
  private readonly stopListeners: (() => void)[] = [];

  constructor(readonly call: ServerWritableStream<ReadReq, ReadResp>) {
    // The client went away (cancel, disconnect, server shutdown): stop work and listeners.
    call.on('cancelled', () => this.stop());
    call.on('error', () => this.stop());
  }

  onStop(listener: () => void): void {
    if (this.stopped) listener();
    else this.stopListeners.push(listener);
  }

  async write(response: ReadResp): Promise<void> {
    if (this.stopped) return;
    if (this.call.write(response)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.call.off('drain', done);
        resolve();
      };
      this.call.on('drain', done);
      this.onStop(done);
    });
  }

  end(): void {
    if (this.stopped) return;
    this.stop();
    this.call.end();
  }

  fail(code: status, details: string): void {
    if (code === status.OK) this.end();
    else this.failWith(failure(code, details));
  }

  failWith(error: ServerErrorResponse): void {
    if (this.stopped) return;
    this.stop();
    this.call.emit('error', error);
  }

  abandon(): void {
    this.stop();
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const listener of this.stopListeners.splice(0)) listener();
  }
}

function* range(from: number, to: number): Generator<number> {
  if (from <= to) for (let index = from; index < to; index++) yield index;
  else for (let index = from; index > to; index--) yield index;
}

function requireOptions(request: ReadReq): ReadReq.Options {
  const options = request.getOptions();
  if (!options) throw new InvalidRequest('read options are required');
  return options;
}

function positionOf(position: ReadReq.Options.Position | undefined): LogPosition {
  if (!position) throw new InvalidRequest('position is required');
  return parsePosition(position.getCommitPosition(), position.getPreparePosition());
}

function compileFilter(options: ReadReq.Options.FilterOptions): Filter {
  const onStream = options.hasStreamIdentifier();
  const expression = onStream ? options.getStreamIdentifier() : options.getEventType();
  if (!expression) throw new InvalidRequest('a filter needs a stream identifier or event type expression');
  const prefixes = expression.getPrefixList();
  const regex = expression.getRegex() ? new RegExp(expression.getRegex()) : null;
  const subject = (event: StoredEvent) => (onStream ? event.stream : event.type);
  if (prefixes.length > 0) return (event) => prefixes.some((prefix) => subject(event).startsWith(prefix));
  if (regex) return (event) => regex.test(subject(event));
  throw new InvalidRequest('a filter expression needs a regex or prefixes');
}

function proposedEvent(message: AppendReq.ProposedMessage | BatchAppendReq.ProposedMessage): ProposedEvent {
  const metadata = message.getMetadataMap();
  const type = metadata.get('type');
  const contentType = metadata.get('content-type');
  if (!type || !contentType) {
    throw new InvalidRequest(
      'Required metadata properties are missing',
      exceptionMetadata('missing-required-metadata-property', {
        'required-metadata-properties': 'type,content-type',
      }),
    );
  }
  return {
    id: parseUuid(message.getId()),
    type,
    contentType,
    data: message.getData_asU8(),
    customMetadata: message.getCustomMetadata_asU8(),
  };
}

function payloadSize(events: ProposedEvent[]): number {
  return events.reduce((sum, event) => sum + event.data.length + event.customMetadata.length, 0);
}

function toServiceError(error: unknown): ServerErrorResponse {
  if (error instanceof InvalidRequest) return failure(status.INVALID_ARGUMENT, error.message, error.metadata);
  if (error instanceof ServerFailure) return failure(status.INTERNAL, error.message);
  return failure(status.INTERNAL, errorMessage(error));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function appendExpected(options: AppendReq.Options): ExpectedState {
  if (options.hasRevision()) return { kind: 'revision', revision: BigInt(options.getRevision()) };
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  return { kind: 'any' };
}

function batchExpected(options: BatchAppendReq.Options): ExpectedState {
  if (options.hasStreamPosition()) return { kind: 'revision', revision: BigInt(options.getStreamPosition()) };
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  return { kind: 'any' };
}

function appendResponse(outcome: AppendOutcome, expected: ExpectedState): AppendResp {
  if (outcome.kind === 'wrong_expected_version') {
    const wrong = new AppendResp.WrongExpectedVersion();
    if (outcome.currentRevision === null) wrong.setCurrentNoStream(new Empty());
    else wrong.setCurrentRevision(outcome.currentRevision.toString());
    switch (expected.kind) {
      case 'any':
        wrong.setExpectedAny(new Empty());
        break;
      case 'no_stream':
        wrong.setExpectedNoStream(new Empty());
        break;
      case 'stream_exists':
        wrong.setExpectedStreamExists(new Empty());
        break;
      case 'revision':
        wrong.setExpectedRevision(expected.revision.toString());
        break;
    }
    return new AppendResp().setWrongExpectedVersion(wrong);
  }
  const success = new AppendResp.Success();
  if (outcome.currentRevision === null) success.setNoStream(new Empty());
  else success.setCurrentRevision(outcome.currentRevision.toString());
  if (outcome.position === null) success.setNoPosition(new Empty());
  else
    success.setPosition(
      new AppendResp.Position()
        .setCommitPosition(outcome.position.commit.toString())
        .setPreparePosition(outcome.position.prepare.toString()),
    );
  return new AppendResp().setSuccess(success);
}

/** A BatchAppend reply always echoes the correlation id, the stream and the expectation. */
function batchResponse(batch: PendingBatch): BatchAppendResp {
  const response = new BatchAppendResp()
    .setCorrelationId(batch.correlationId)
    .setStreamIdentifier(batch.options.getStreamIdentifier());
  const options = batch.options;
  if (options.hasStreamPosition()) response.setStreamPosition(options.getStreamPosition());
  else if (options.hasNoStream()) response.setNoStream(new GoogleEmpty());
  else if (options.hasStreamExists()) response.setStreamExists(new GoogleEmpty());
  else response.setAny(new GoogleEmpty());
  return response;
}

function batchError(batch: PendingBatch, code: Code, message: string, details: Any): BatchAppendResp {
  return batchResponse(batch).setError(new Status().setCode(code).setMessage(message).setDetails(details));
}

function packAny(message: { serializeBinary(): Uint8Array }, name: string): Any {
  const any = new Any();
  any.pack(message.serializeBinary(), `event_store.client.${name}`);
  return any;
}
