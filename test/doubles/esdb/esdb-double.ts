/**
 * An in-process stand-in for a single insecure EventStoreDB node, speaking its gRPC protocol so
 * that the real `@eventstore/db-client` runs against it. See docs/esdb-double.md for its limits.
 */
import { randomUUID } from 'node:crypto';
import { Server, ServerCredentials, ServerUnaryCall, sendUnaryData, status } from '@grpc/grpc-js';
import { ServerFeaturesService } from '@eventstore/db-client/generated/serverfeatures_grpc_pb';
import { SupportedMethod, SupportedMethods } from '@eventstore/db-client/generated/serverfeatures_pb';
import { Empty } from '@eventstore/db-client/generated/shared_pb';
import { StreamsService as StreamsServiceDefinition } from '@eventstore/db-client/generated/streams_grpc_pb';
import { EsdbLog, ProposedEvent } from './esdb-log';
import { AppendFault, EsdbQuirk, StreamsService } from './streams-service';

export { type AppendFault, ESDB_QUIRKS, type EsdbQuirk } from './streams-service';

export interface EsdbDoubleOptions {
  /** Advertise and serve BatchAppend (default true); false makes the client use unary Append. */
  batchAppend?: boolean;
  /** Largest append in bytes of data and metadata; the server's default is 1 MiB. */
  maxAppendSize?: number;
  /** Write a few system events first, as a fresh server does, so filters have work (default true). */
  seedSystemEvents?: boolean;
  /** Checkpoint behaviours of real server versions that lose events if trusted (EsdbQuirk). */
  quirks?: readonly EsdbQuirk[];
}

export interface EsdbDouble {
  /** `esdb://127.0.0.1:PORT?tls=false` */
  readonly connectionString: string;
  readonly port: number;
  /** The in-memory log, for tests that need to plant events (e.g. system events). */
  readonly log: EsdbLog;
  /** How many calls each method received: `Read`, `Subscribe`, `Append`, `BatchAppend`, ... */
  calls(method: string): number;
  /** How many subscriptions are being served right now. */
  activeSubscriptions(): number;
  /**
   * The next `count` appends (Append calls, or batches of BatchAppend) fail with `fault`, before
   * writing or, with `afterWrite`, after writing: the answer is lost, the events are in the log.
   */
  failAppends(count: number, fault: AppendFault, options?: { afterWrite?: boolean }): void;
  /** The next `count` reads (not subscriptions) fail with `fault`. */
  failReads(count: number, fault: AppendFault): void;
  /** Ends every live subscription with `code` (default UNAVAILABLE; OK ends them cleanly). */
  dropSubscriptions(code?: status): void;
  /**
   * Kills every connection and refuses new ones for `ms`, then serves again on the same port with
   * the same log: a server restart. Resolves once it serves again.
   */
  refuseConnectionsFor(ms: number): Promise<void>;
  stop(): Promise<void>;
}

const SERVER_VERSION = '24.10.0';

export async function startEsdbDouble(options: EsdbDoubleOptions = {}): Promise<EsdbDouble> {
  const batchAppend = options.batchAppend ?? true;
  const log = new EsdbLog();
  if (options.seedSystemEvents ?? true) seedSystemEvents(log);
  const counts = new Map<string, number>();
  const streams = new StreamsService({
    log,
    batchAppend,
    maxAppendSize: options.maxAppendSize ?? 1024 * 1024,
    countCall: (method) => counts.set(method, (counts.get(method) ?? 0) + 1),
    quirks: new Set(options.quirks ?? []),
    address: () => ({ host: '127.0.0.1', port }),
  });

  const features = (
    _call: ServerUnaryCall<Empty, SupportedMethods>,
    callback: sendUnaryData<SupportedMethods>,
  ) => {
    counts.set('GetSupportedMethods', (counts.get('GetSupportedMethods') ?? 0) + 1);
    callback(null, supportedMethods(batchAppend));
  };

  const listen = async (port: number): Promise<{ server: Server; port: number }> => {
    const server = new Server();
    server.addService(ServerFeaturesService, { getSupportedMethods: features });
    server.addService(StreamsServiceDefinition, streams.handlers());
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (error, actual) =>
        error ? reject(error) : resolve(actual),
      ),
    );
    return { server, port: bound };
  };

  let current: Server | null;
  const first = await listen(0);
  current = first.server;
  const port = first.port;
  let stopping: Promise<void> | null = null;

  const shutDown = () => {
    current?.forceShutdown();
    current = null;
    for (const subscription of [...streams.subscriptions]) subscription.abandon();
  };

  return {
    connectionString: `esdb://127.0.0.1:${port}?tls=false`,
    port,
    log,
    calls: (method) => counts.get(method) ?? 0,
    activeSubscriptions: () => streams.subscriptions.size,
    failReads(count, fault) {
      for (let i = 0; i < count; i++) streams.plannedReadFaults.push(fault);
    },
    failAppends(count, fault, { afterWrite = false } = {}) {
      for (let i = 0; i < count; i++) streams.plannedFaults.push({ fault, afterWrite });
    },
    dropSubscriptions(code = status.UNAVAILABLE) {
      for (const subscription of [...streams.subscriptions]) subscription.drop(code);
    },
    async refuseConnectionsFor(ms) {
      if (stopping) throw new Error('the double is stopped');
      shutDown();
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (stopping) return;
      current = (await listen(port)).server;
    },
    stop() {
      stopping ??= Promise.resolve().then(shutDown);
      return stopping;
    },
  };
}

function supportedMethods(batchAppend: boolean): SupportedMethods {
  const method = (service: string, name: string, features: string[] = []) =>
    new SupportedMethod().setServiceName(service).setMethodName(name).setFeaturesList(features);
  const streams = 'event_store.client.streams.streams';
  const methods = [
    method('event_store.client.server_features.serverfeatures', 'getsupportedmethods'),
    method(streams, 'read', ['position', 'events']),
    method(streams, 'append'),
  ];
  if (batchAppend) methods.push(method(streams, 'batchappend'));
  return new SupportedMethods().setMethodsList(methods).setEventStoreServerVersion(SERVER_VERSION);
}

/** What a fresh node writes to `$all` before any client does. */
function seedSystemEvents(log: EsdbLog): void {
  const json = (type: string, data: object): ProposedEvent => ({
    id: randomUUID(),
    type,
    contentType: 'application/json',
    data: Buffer.from(JSON.stringify(data)),
    customMetadata: new Uint8Array(),
  });
  log.append('$settings', { kind: 'any' }, [
    json('$settings', { $userStreamAcl: { $r: '$all' }, $systemStreamAcl: { $r: '$admins' } }),
  ]);
  log.append('$user-admin', { kind: 'any' }, [
    json('$User', { loginName: 'admin', fullName: 'Event Store Administrator' }),
  ]);
  log.append('$users', { kind: 'any' }, [json('$UserCreated', { loginName: 'admin' })]);
}
