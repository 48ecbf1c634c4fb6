import { chmodSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createConnection, createServer, Server, Socket } from 'node:net';
import { join } from 'node:path';
import { errorMessage } from '@chronicle/config';
import { ReadModelRebuilder, RebuildProgress, RebuildResult, VerifyResult } from './read-model-rebuilder';

/**
 * On the embedded default the live read models exist only in the API server's memory, so the
 * CLI asks each running server to rebuild or verify its own models over a Unix socket in the
 * data directory (`run/api-<pid>.sock`, owner only). Reaching it takes the same access as
 * reading events.db and the token secret, so it needs no credentials of its own; a server that
 * is not running has no socket to answer, which is how the CLI knows.
 */
export type ControlCommand = 'rebuild' | 'verify' | 'status';
export type ControlResult<C extends ControlCommand> = C extends 'rebuild'
  ? RebuildResult
  : C extends 'verify'
    ? VerifyResult
    : StatusReport;

/** What `status` answers: the server's projections status (the application's status query). */
export type StatusReport = Record<string, unknown>;

type Message =
  | { progress: RebuildProgress }
  | { result: RebuildResult | VerifyResult | StatusReport }
  | { error: { code: string; message: string } };

const SOCKET_NAME = /^api-(\d+)\.sock$/;
/** Progress messages per second at most. */
const PROGRESS_INTERVAL_MS = 200;
/** A request is one short line. */
const MAX_REQUEST_BYTES = 1024;

export const controlSocketDir = (dataDir: string): string => join(dataDir, 'run');

export interface ControlServerLogger {
  log(message: string): void;
  warn(message: string): void;
}

/** The server side: one operation at a time; a client that disconnects aborts its operation. */
export class ProjectionsControlServer {
  private server: Server | null = null;
  private path: string | null = null;
  private running: AbortController | null = null;

  constructor(
    private readonly rebuilder: ReadModelRebuilder,
    private readonly dataDir: string,
    private readonly logger: ControlServerLogger,
    private readonly status: () => Promise<StatusReport>,
  ) {}

  async start(): Promise<void> {
    const dir = controlSocketDir(this.dataDir);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `api-${process.pid}.sock`);
    // Left by an earlier process that had this pid and died without cleaning up.
    rmSync(path, { force: true });
    const server = createServer((socket) => this.serve(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    chmodSync(path, 0o600);
    this.server = server;
    this.path = path;
  }

  async stop(): Promise<void> {
    this.running?.abort(new Error('The server is shutting down'));
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.path) rmSync(this.path, { force: true });
    this.path = null;
  }

  private serve(socket: Socket): void {
    let request = '';
    socket.setEncoding('utf8');
    socket.on('error', () => undefined);
    const onData = (chunk: string) => {
      request += chunk;
      const end = request.indexOf('\n');
      if (end < 0 && request.length <= MAX_REQUEST_BYTES) return;
      socket.off('data', onData);
      void this.run(socket, end < 0 ? null : request.slice(0, end));
    };
    socket.on('data', onData);
  }

  private async run(socket: Socket, line: string | null): Promise<void> {
    const send = (message: Message) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
    };
    const request = parseRequest(line);
    const command = request?.command ?? null;
    if (request === null || command === null) {
      send({
        error: {
          code: 'bad-request',
          message: 'Send {"command":"rebuild"}, {"command":"verify"} or {"command":"status"}',
        },
      });
      socket.end();
      return;
    }
    // A read, answered even while a rebuild runs.
    if (command === 'status') {
      try {
        send({ result: await this.status() });
      } catch (error) {
        send({ error: { code: 'failed', message: errorMessage(error) } });
      }
      socket.end();
      return;
    }
    if (this.running) {
      send({ error: { code: 'busy', message: 'A rebuild or verify is already running on this server' } });
      socket.end();
      return;
    }
    const controller = new AbortController();
    this.running = controller;
    socket.on('close', () => controller.abort(new Error('The client went away')));
    let lastProgress = 0;
    const onProgress = (progress: RebuildProgress) => {
      const now = Date.now();
      if (now - lastProgress < PROGRESS_INTERVAL_MS) return;
      lastProgress = now;
      send({ progress });
    };
    this.logger.log(`projections ${command} started`);
    try {
      const options = { onProgress, signal: controller.signal };
      const result =
        command === 'rebuild'
          ? await this.rebuilder.rebuild({ ...options, projection: request.projection })
          : await this.rebuilder.verify(options);
      this.logger.log(`projections ${command} finished: ${JSON.stringify(result)}`);
      send({ result });
    } catch (error) {
      const message = errorMessage(error);
      this.logger.warn(`projections ${command} failed: ${message}`);
      send({ error: { code: controller.signal.aborted ? 'aborted' : 'failed', message } });
    } finally {
      this.running = null;
      socket.end();
    }
  }
}

interface ControlRequest {
  command: ControlCommand;
  /** A rebuild of this projection alone. */
  projection?: string;
}

function parseRequest(line: string | null): ControlRequest | null {
  if (line === null) return null;
  try {
    const { command, projection } = JSON.parse(line) as { command?: unknown; projection?: unknown };
    if (command !== 'rebuild' && command !== 'verify' && command !== 'status') return null;
    if (projection !== undefined && (typeof projection !== 'string' || command !== 'rebuild')) return null;
    return { command, ...(projection === undefined ? {} : { projection }) };
  } catch {
    return null;
  }
}

export interface RunOptions {
  onProgress?(progress: RebuildProgress): void;
  signal?: AbortSignal;
  /** A rebuild of this projection alone. */
  projection?: string;
}

/** What a running server answered with an error. */
export class ControlCommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ControlCommandError';
  }
}

/**
 * The client side: runs `command` on every server running on `dataDir`, one after another, and
 * returns their results; none when no server is running. Sockets nobody listens on are removed.
 */
export async function runOnRunningServers<C extends ControlCommand>(
  dataDir: string,
  command: C,
  options: RunOptions = {},
): Promise<Array<ControlResult<C>>> {
  const dir = controlSocketDir(dataDir);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => SOCKET_NAME.test(name));
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return [];
    throw error;
  }
  const results: Array<ControlResult<C>> = [];
  for (const name of names.sort()) {
    const result = await runOn<C>(join(dir, name), command, options);
    if (result !== null) results.push(result);
  }
  return results;
}

/** Null when nothing listens on the socket (its server has stopped). */
function runOn<C extends ControlCommand>(
  path: string,
  command: C,
  options: RunOptions,
): Promise<ControlResult<C> | null> {
  return new Promise((resolve, reject) => {
    let connected = false;
    let settled = false;
    let buffer = '';
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    const socket = createConnection(path);
    const onAbort = () => {
      socket.destroy();
      const reason: unknown = options.signal?.reason;
      finish(() => reject(reason instanceof Error ? reason : new Error('Aborted')));
    };
    options.signal?.addEventListener('abort', onAbort);
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      connected = true;
      const request: ControlRequest = {
        command,
        ...(options.projection ? { projection: options.projection } : {}),
      };
      socket.write(`${JSON.stringify(request)}\n`);
    });
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
        const message = JSON.parse(buffer.slice(0, end)) as Message;
        buffer = buffer.slice(end + 1);
        if ('progress' in message) options.onProgress?.(message.progress);
        else if ('result' in message) finish(() => resolve(message.result as ControlResult<C>));
        else finish(() => reject(new ControlCommandError(message.error.code, message.error.message)));
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!connected && (error.code === 'ECONNREFUSED' || error.code === 'ENOENT')) {
        rmSync(path, { force: true });
        finish(() => resolve(null));
      } else {
        finish(() => reject(error));
      }
    });
    socket.on('close', () =>
      finish(() => reject(new Error('The server closed the connection before answering (did it stop?)'))),
    );
  });
}
