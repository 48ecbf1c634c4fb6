import { AddressInfo, createServer, Server, Socket } from 'node:net';

import { Document } from 'bson';

import { MongoState } from './commands';
import { CommandError } from './errors';
import { decodeRequest, encodeOpMsg, encodeOpReply, MessageReader, OP_QUERY } from './wire';

export interface MongoDouble {
  /** A connection string for the `mongodb` driver; `directConnection` makes it a standalone. */
  uri: string;
  /**
   * The next `count` commands that `matches` picks are answered with `error`, as the server
   * answers a refusal (a validator, a lost primary, a killed cursor), without being run.
   */
  failCommands(count: number, matches: CommandMatcher, error: CommandError): void;
  /**
   * Drops the planned faults no command has met yet, and says how many: a test's teardown checks it
   * is 0, so that no plan missed, and none is left for the next test to meet.
   */
  clearFaults(): number;
  stop(): Promise<void>;
}

export type CommandMatcher = (db: string, command: Document) => boolean;

/**
 * Starts a MongoDB wire-protocol double on a free local port: a standalone server holding its
 * data in memory, speaking OP_MSG (and OP_QUERY for the driver's first handshake). See
 * docs/mongo-double.md for what it models.
 */
export interface MongoDoubleOptions {
  /** Sees every command as received (after decoding), e.g. to check the concerns a client sends. */
  onCommand?: (db: string, command: Document) => void;
}

export async function startMongoDouble(options: MongoDoubleOptions = {}): Promise<MongoDouble> {
  const state = new MongoState();
  const sockets = new Set<Socket>();
  let connections = 0;
  const planned: Array<{ matches: CommandMatcher; error: CommandError }> = [];

  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const connectionId = ++connections;
    const reader = new MessageReader();
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const message of reader.push(chunk)) {
          const request = decodeRequest(message);
          let db: string;
          if (request.opCode === OP_QUERY) {
            const name = Object.keys(request.command)[0];
            // The driver speaks OP_QUERY only for its first hello, as a real server would accept.
            if (!MongoState.isHandshake(name))
              throw new Error(`OP_QUERY is only accepted for the handshake, not ${name}`);
            db = request.fullCollectionName!.replace(/\.\$cmd$/, '');
          } else {
            db = String(request.command.$db);
          }
          options.onCommand?.(db, request.command);
          const fault = planned.findIndex((plan) => plan.matches(db, request.command));
          const reply =
            fault === -1
              ? state.run({ db, command: request.command, connectionId })
              : planned.splice(fault, 1)[0].error.toReply();
          if (request.moreToCome) continue;
          socket.write(
            request.opCode === OP_QUERY
              ? encodeOpReply(request.requestId, reply)
              : encodeOpMsg(request.requestId, reply),
          );
        }
      } catch {
        // A message the double cannot read: drop the connection, as a server does on a protocol error.
        socket.destroy();
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    uri: `mongodb://127.0.0.1:${port}/?directConnection=true`,
    failCommands: (count, matches, error) => {
      for (let i = 0; i < count; i++) planned.push({ matches, error });
    },
    clearFaults: () => planned.splice(0).length,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        for (const socket of sockets) socket.destroy();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
