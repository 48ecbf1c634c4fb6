import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createConnection, createServer, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ControlCommandError,
  controlSocketDir,
  ProjectionsControlServer,
  runOnRunningServers,
} from './control-socket';
import {
  OperationOptions,
  ReadModelRebuilder,
  RebuildOptions,
  RebuildResult,
  VerifyResult,
} from './read-model-rebuilder';

const REBUILT: RebuildResult = {
  events: 3,
  seconds: 0.5,
  eventsPerSecond: 6,
  parked: { count: 0, first: [] },
};
const VERIFIED: VerifyResult = {
  differences: 0,
  documents: 2,
  events: 3,
  first: [],
  parked: { count: 0, first: [] },
};

/** A promise with its resolve and reject at hand. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/**
 * The rebuilder's two operations, each recorded and left pending until the test settles it: the
 * socket's protocol is what is tested here (the rebuilder has its own spec).
 */
class ScriptedRebuilder {
  readonly calls: { command: 'rebuild' | 'verify'; options: RebuildOptions }[] = [];
  private next: ReturnType<typeof deferred<unknown>>[] = [];
  readonly started = deferred<void>();

  rebuild(options: RebuildOptions): Promise<RebuildResult> {
    return this.call('rebuild', options) as Promise<RebuildResult>;
  }

  verify(options: OperationOptions): Promise<VerifyResult> {
    return this.call('verify', options) as Promise<VerifyResult>;
  }

  get last() {
    return this.calls.at(-1)!;
  }

  settle(outcome: { result: unknown } | { error: unknown }): void {
    const pending = this.next.shift()!;
    if ('result' in outcome) pending.resolve(outcome.result);
    else pending.reject(outcome.error);
  }

  private call(command: 'rebuild' | 'verify', options: RebuildOptions): Promise<unknown> {
    this.calls.push({ command, options });
    const pending = deferred<unknown>();
    this.next.push(pending);
    this.started.resolve();
    return pending.promise;
  }
}

/** A client connected to the socket at `path`, collecting what the server sends it. */
async function connected(path: string): Promise<{ socket: Socket; received: () => string }> {
  const socket = createConnection(path);
  socket.setEncoding('utf8');
  let received = '';
  socket.on('data', (chunk: string) => (received += chunk));
  await once(socket, 'connect');
  return { socket, received: () => received };
}

/** Sends raw bytes to a socket and collects every line it answers until it ends the connection. */
async function exchange(path: string, ...chunks: string[]): Promise<unknown[]> {
  const { socket, received } = await connected(path);
  for (const chunk of chunks) socket.write(chunk);
  await once(socket, 'end');
  socket.destroy();
  return received()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as unknown);
}

describe('projections control socket', () => {
  let dataDir: string;
  let rebuilder: ScriptedRebuilder;
  let server: ProjectionsControlServer;
  let status: jest.Mock<Promise<Record<string, unknown>>, []>;
  const logger = { log: jest.fn(), warn: jest.fn() };
  let socketPath: string;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'chronicle-control-'));
    rebuilder = new ScriptedRebuilder();
    status = jest.fn(() => Promise.resolve({ lag: 0 }));
    logger.log.mockClear();
    logger.warn.mockClear();
    server = new ProjectionsControlServer(
      rebuilder as unknown as ReadModelRebuilder,
      dataDir,
      logger,
      status,
    );
    socketPath = join(controlSocketDir(dataDir), `api-${process.pid}.sock`);
  });

  /** The server's listening socket, to see its own side of a connection. */
  const listening = () => (server as unknown as { server: Server }).server;

  afterEach(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('the server', () => {
    it('listens on run/api-<pid>.sock, its directory and socket readable by the owner only', async () => {
      await server.start();

      expect(controlSocketDir(dataDir)).toBe(join(dataDir, 'run'));
      expect(statSync(controlSocketDir(dataDir)).mode & 0o777).toBe(0o700);
      expect(statSync(socketPath).isSocket()).toBe(true);
      expect(statSync(socketPath).mode & 0o777).toBe(0o600);
    });

    it('takes the place of a file an earlier process with its pid left behind', async () => {
      mkdirSync(controlSocketDir(dataDir), { recursive: true });
      writeFileSync(socketPath, 'left over');

      await server.start();

      expect(statSync(socketPath).isSocket()).toBe(true);
      expect(await runOnRunningServers(dataDir, 'status')).toEqual([{ lag: 0 }]);
    });

    it('fails to start where it cannot listen', async () => {
      mkdirSync(socketPath, { recursive: true });
      writeFileSync(join(socketPath, 'inside'), '');

      await expect(server.start()).rejects.toThrow();
    });

    it('removes its socket when it stops, and answers no more', async () => {
      await server.start();
      await server.stop();

      expect(existsSync(socketPath)).toBe(false);
      expect(await runOnRunningServers(dataDir, 'status')).toEqual([]);
      // A second stop has nothing left to do.
      await expect(server.stop()).resolves.toBeUndefined();
    });

    it('answers status with the status report', async () => {
      await server.start();

      expect(await exchange(socketPath, '{"command":"status"}\n')).toEqual([{ result: { lag: 0 } }]);
      expect(status).toHaveBeenCalledTimes(1);
    });

    it('answers a failed status with its message', async () => {
      status.mockRejectedValueOnce(new Error('store down'));
      status.mockRejectedValueOnce('not an error');
      await server.start();

      expect(await exchange(socketPath, '{"command":"status"}\n')).toEqual([
        { error: { code: 'failed', message: 'store down' } },
      ]);
      expect(await exchange(socketPath, '{"command":"status"}\n')).toEqual([
        { error: { code: 'failed', message: 'not an error' } },
      ]);
    });

    it('reads a request that arrives in pieces, up to its first line end', async () => {
      await server.start();

      expect(await exchange(socketPath, '{"comm', 'and":"sta', 'tus"}\n{"command":"rebuild"}\n')).toEqual([
        { result: { lag: 0 } },
      ]);
      expect(rebuilder.calls).toEqual([]);
    });

    it.each([
      ['no JSON', 'rebuild please\n'],
      ['no command', '{}\n'],
      ['an unknown command', '{"command":"drop"}\n'],
      ['a projection with verify', '{"command":"verify","projection":"users"}\n'],
      ['a projection with status', '{"command":"status","projection":"users"}\n'],
      ['a projection that is not a string', '{"command":"rebuild","projection":7}\n'],
      ['an empty line', '\n'],
      // Past 1,024 bytes with no line end: refused whole, not read as the JSON before its last byte.
      ['a long line with no end', `{"command":"status"}${' '.repeat(1080)}x`],
      // Never its end: the server stops reading past 1,024 bytes.
      ['a line longer than a request can be', `{"command":"status","padding":"${'x'.repeat(1100)}`],
    ])('refuses %s, running nothing', async (_, request) => {
      await server.start();

      expect(await exchange(socketPath, request)).toEqual([
        {
          error: {
            code: 'bad-request',
            message: 'Send {"command":"rebuild"}, {"command":"verify"} or {"command":"status"}',
          },
        },
      ]);
      expect(rebuilder.calls).toEqual([]);
      expect(status).not.toHaveBeenCalled();
    });

    it('reads nothing a client sends after its request line, even while the request runs', async () => {
      const answer = deferred<Record<string, unknown>>();
      const asked = deferred<void>();
      status.mockImplementationOnce(() => {
        asked.resolve();
        return answer.promise;
      });
      await server.start();
      // The server's own side of the connection, to see when the second line has reached it.
      const secondChunk = new Promise<void>((resolve) =>
        listening().once('connection', (socket: Socket) => {
          let chunks = 0;
          socket.on('data', () => ++chunks === 2 && resolve());
        }),
      );
      const { socket: client, received } = await connected(socketPath);
      client.write('{"command":"status"}\n');
      await asked.promise;
      client.write('{"command":"rebuild"}\n');
      await secondChunk;
      answer.resolve({ lag: 1 });
      await once(client, 'end');
      client.destroy();

      expect(received()).toBe('{"result":{"lag":1}}\n');
      expect(status).toHaveBeenCalledTimes(1);
      expect(rebuilder.calls).toEqual([]);
    });

    it('survives a connection that fails mid-request, and answers the next one', async () => {
      await server.start();
      const accepted = new Promise<Socket>((resolve) => listening().once('connection', resolve));
      const { socket: client } = await connected(socketPath);
      client.on('error', () => undefined);
      client.write('{"comm');
      const served = await accepted;
      // An error on the server's side of the connection (a reset, a broken pipe) is not the process's.
      const closed = new Promise((resolve) => served.once('close', resolve));
      served.destroy(new Error('read ECONNRESET'));
      await closed;
      client.destroy();

      expect(await exchange(socketPath, '{"command":"status"}\n')).toEqual([{ result: { lag: 0 } }]);
    });

    it('waits for the end of a line up to 1,024 bytes', async () => {
      await server.start();
      // The server's own view of the connection: the line end is sent only once it has read the rest.
      const received = new Promise<void>((resolve) =>
        listening().once('connection', (socket: Socket) => socket.once('data', () => resolve())),
      );
      const padded = `{"command":"status"${' '.repeat(1024 - 20)}}`;
      expect(padded).toHaveLength(1024);
      const { socket, received: answer } = await connected(socketPath);

      socket.write(padded);
      await received;
      socket.write('\n');
      await once(socket, 'end');
      socket.destroy();

      expect(JSON.parse(answer())).toEqual({ result: { lag: 0 } });
    });

    it('runs a rebuild of one projection, logging its start and result', async () => {
      await server.start();
      const client = runOnRunningServers(dataDir, 'rebuild', { projection: 'users' });
      await rebuilder.started.promise;

      expect(rebuilder.last.command).toBe('rebuild');
      expect(rebuilder.last.options.projection).toBe('users');
      expect(rebuilder.last.options.signal?.aborted).toBe(false);
      expect(logger.log).toHaveBeenCalledWith('projections rebuild started');
      rebuilder.settle({ result: REBUILT });

      expect(await client).toEqual([REBUILT]);
      expect(logger.log).toHaveBeenLastCalledWith(`projections rebuild finished: ${JSON.stringify(REBUILT)}`);
    });

    it('runs a rebuild of every projection when none is named', async () => {
      await server.start();
      const client = runOnRunningServers(dataDir, 'rebuild');
      await rebuilder.started.promise;

      expect(rebuilder.last.options).not.toHaveProperty('projection', expect.anything());
      rebuilder.settle({ result: REBUILT });
      expect(await client).toEqual([REBUILT]);
    });

    it('runs a verify', async () => {
      await server.start();
      const client = runOnRunningServers(dataDir, 'verify');
      await rebuilder.started.promise;

      expect(rebuilder.last.command).toBe('verify');
      rebuilder.settle({ result: VERIFIED });
      expect(await client).toEqual([VERIFIED]);
      expect(logger.log).toHaveBeenCalledWith('projections verify started');
    });

    it('sends progress at most every 200 ms', async () => {
      let now = 10_000;
      const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
      try {
        await server.start();
        const seen: number[] = [];
        const client = runOnRunningServers(dataDir, 'rebuild', {
          onProgress: ({ events }) => seen.push(events),
        });
        await rebuilder.started.promise;
        const report = rebuilder.last.options.onProgress!;

        report({ events: 1, fraction: 0.1 });
        now += 199;
        report({ events: 2, fraction: 0.2 });
        now += 1;
        report({ events: 3, fraction: 0.3 });
        now += 200;
        report({ events: 4, fraction: 0.4 });
        rebuilder.settle({ result: REBUILT });

        expect(await client).toEqual([REBUILT]);
        expect(seen).toEqual([1, 3, 4]);
      } finally {
        clock.mockRestore();
      }
    });

    it('answers a failed operation with its message, and runs the next one', async () => {
      await server.start();
      const failing = runOnRunningServers(dataDir, 'rebuild');
      await rebuilder.started.promise;
      rebuilder.settle({ error: new Error('disk on fire') });

      await expect(failing).rejects.toEqual(new ControlCommandError('failed', 'disk on fire'));
      await expect(failing).rejects.toMatchObject({ name: 'ControlCommandError', code: 'failed' });
      expect(logger.warn).toHaveBeenCalledWith('projections rebuild failed: disk on fire');

      const next = runOnRunningServers(dataDir, 'verify');
      await new Promise<void>((resolve) => {
        const poll = () => (rebuilder.calls.length === 2 ? resolve() : setImmediate(poll));
        poll();
      });
      rebuilder.settle({ error: 'no Error' });
      await expect(next).rejects.toEqual(new ControlCommandError('failed', 'no Error'));
    });

    it('refuses a second operation while one runs, but answers status', async () => {
      await server.start();
      const first = runOnRunningServers(dataDir, 'rebuild');
      await rebuilder.started.promise;

      const busy = runOnRunningServers(dataDir, 'verify');
      await expect(busy).rejects.toEqual(
        new ControlCommandError('busy', 'A rebuild or verify is already running on this server'),
      );
      await expect(busy).rejects.toMatchObject({ code: 'busy' });
      expect(await runOnRunningServers(dataDir, 'status')).toEqual([{ lag: 0 }]);
      expect(rebuilder.calls).toHaveLength(1);

      rebuilder.settle({ result: REBUILT });
      expect(await first).toEqual([REBUILT]);
    });

    it('aborts the operation of a client that goes away', async () => {
      await server.start();
      const controller = new AbortController();
      const client = runOnRunningServers(dataDir, 'rebuild', { signal: controller.signal });
      await rebuilder.started.promise;
      const signal = rebuilder.last.options.signal!;

      controller.abort(new Error('Ctrl-C'));
      await expect(client).rejects.toThrow('Ctrl-C');
      if (!signal.aborted) await once(signal, 'abort');

      expect((signal.reason as Error).message).toBe('The client went away');
      rebuilder.settle({ error: signal.reason });
      // The server is free again once the operation has given up.
      await new Promise<void>((resolve) => {
        const poll = () => (logger.warn.mock.calls.length > 0 ? resolve() : setImmediate(poll));
        poll();
      });
      expect(logger.warn).toHaveBeenCalledWith('projections rebuild failed: The client went away');
      const next = runOnRunningServers(dataDir, 'verify');
      await new Promise<void>((resolve) => {
        const poll = () => (rebuilder.calls.length === 2 ? resolve() : setImmediate(poll));
        poll();
      });
      rebuilder.settle({ result: VERIFIED });
      expect(await next).toEqual([VERIFIED]);
    });

    it('answers an operation aborted by the server shutting down with the code aborted', async () => {
      await server.start();
      const { socket, received } = await connected(socketPath);
      socket.write('{"command":"verify"}\n');
      await rebuilder.started.promise;
      const signal = rebuilder.last.options.signal!;

      const stopping = server.stop();
      expect(signal.aborted).toBe(true);
      expect((signal.reason as Error).message).toBe('The server is shutting down');
      rebuilder.settle({ error: signal.reason });
      await once(socket, 'end');
      await stopping;

      expect(JSON.parse(received())).toEqual({
        error: { code: 'aborted', message: 'The server is shutting down' },
      });
      socket.destroy();
    });
  });

  describe('the client', () => {
    it('finds no server where the data directory has no run directory', async () => {
      expect(await runOnRunningServers(join(dataDir, 'absent'), 'status')).toEqual([]);
    });

    it('fails when the run directory cannot be read', async () => {
      writeFileSync(controlSocketDir(dataDir), 'not a directory');

      await expect(runOnRunningServers(dataDir, 'status')).rejects.toMatchObject({ code: 'ENOTDIR' });
    });

    it('removes the sockets nobody listens on, and leaves other files alone', async () => {
      const run = controlSocketDir(dataDir);
      mkdirSync(run);
      writeFileSync(join(run, 'api-1.sock'), '');
      // Listed, but gone by the time it is reached (ENOENT).
      symlinkSync(join(run, 'nowhere'), join(run, 'api-2.sock'));
      writeFileSync(join(run, 'notes.txt'), '');

      expect(await runOnRunningServers(dataDir, 'status')).toEqual([]);
      expect(readdirSync(run)).toEqual(['notes.txt']);
    });

    it('fails on any other error reaching a socket, leaving it in place', async () => {
      const run = controlSocketDir(dataDir);
      mkdirSync(run);
      symlinkSync(join(run, 'api-1.sock'), join(run, 'api-1.sock'));

      await expect(runOnRunningServers(dataDir, 'status')).rejects.toMatchObject({ code: 'ELOOP' });
      expect(readdirSync(run)).toEqual(['api-1.sock']);
    });

    describe('against servers speaking the protocol', () => {
      const servers: Server[] = [];
      /** A server on run/<name> that answers every connection with `lines`, then ends it. */
      const fake = async (name: string, reply: (request: string, socket: Socket) => void) => {
        mkdirSync(controlSocketDir(dataDir), { recursive: true });
        const requests: string[] = [];
        const fakeServer = createServer((socket) => {
          socket.setEncoding('utf8');
          socket.once('data', (request: string) => {
            requests.push(request);
            reply(request, socket);
          });
        });
        fakeServer.listen(join(controlSocketDir(dataDir), name));
        await once(fakeServer, 'listening');
        servers.push(fakeServer);
        return requests;
      };

      afterEach(async () => {
        for (const each of servers.splice(0)) await new Promise((resolve) => each.close(resolve));
      });

      it('asks every server in turn, in the order of their names, and sends the request as one line', async () => {
        const ten = await fake('api-10.sock', (_, socket) => socket.end('{"result":{"server":10}}\n'));
        const two = await fake('api-2.sock', (_, socket) => socket.end('{"result":{"server":2}}\n'));

        expect(await runOnRunningServers(dataDir, 'status')).toEqual([{ server: 10 }, { server: 2 }]);
        expect(ten).toEqual(['{"command":"status"}\n']);
        expect(two).toEqual(['{"command":"status"}\n']);
      });

      it('reads every message of a chunk, and messages split across chunks', async () => {
        await fake('api-1.sock', (_, socket) => {
          socket.write('{"progress":{"events":1,"fraction":0.5}}\n{"progr');
          socket.end('ess":{"events":2,"fraction":1}}\n{"result":{"events":2}}\n');
        });
        const progress: unknown[] = [];

        const results = await runOnRunningServers(dataDir, 'rebuild', {
          projection: 'users',
          onProgress: (each) => progress.push(each),
        });

        expect(results).toEqual([{ events: 2 }]);
        expect(progress).toEqual([
          { events: 1, fraction: 0.5 },
          { events: 2, fraction: 1 },
        ]);
      });

      it('takes progress without a progress callback', async () => {
        await fake('api-1.sock', (_, socket) =>
          socket.end('{"progress":{"events":1,"fraction":1}}\n{"result":{"events":1}}\n'),
        );

        expect(await runOnRunningServers(dataDir, 'rebuild')).toEqual([{ events: 1 }]);
      });

      it('sends the projection of a rebuild', async () => {
        const requests = await fake('api-1.sock', (_, socket) => socket.end('{"result":{}}\n'));

        await runOnRunningServers(dataDir, 'rebuild', { projection: 'users' });

        expect(requests).toEqual(['{"command":"rebuild","projection":"users"}\n']);
      });

      it('fails with the code and message a server answers', async () => {
        await fake('api-1.sock', (_, socket) =>
          socket.end('{"error":{"code":"busy","message":"already running"}}\n'),
        );

        const failure = runOnRunningServers(dataDir, 'verify');

        await expect(failure).rejects.toBeInstanceOf(ControlCommandError);
        await expect(failure).rejects.toMatchObject({
          name: 'ControlCommandError',
          code: 'busy',
          message: 'already running',
        });
      });

      it('fails when a server closes the connection without an answer', async () => {
        await fake('api-1.sock', (_, socket) => socket.end());

        await expect(runOnRunningServers(dataDir, 'verify')).rejects.toThrow(
          'The server closed the connection before answering (did it stop?)',
        );
        expect(existsSync(join(controlSocketDir(dataDir), 'api-1.sock'))).toBe(true);
      });

      it('rejects with "Aborted" when aborted without an Error as the reason', async () => {
        const requests = await fake('api-1.sock', () => undefined);
        const controller = new AbortController();
        const client = runOnRunningServers(dataDir, 'verify', { signal: controller.signal });
        await new Promise<void>((resolve) => {
          const poll = () => (requests.length > 0 ? resolve() : setImmediate(poll));
          poll();
        });

        controller.abort('stop');

        await expect(client).rejects.toThrow(new Error('Aborted'));
      });

      it('stops listening for an abort once answered', async () => {
        await fake('api-1.sock', (_, socket) => socket.end('{"result":{}}\n'));
        const controller = new AbortController();
        const remove = jest.spyOn(controller.signal, 'removeEventListener');

        await runOnRunningServers(dataDir, 'verify', { signal: controller.signal });

        expect(remove).toHaveBeenCalledWith('abort', expect.any(Function));
      });
    });
  });
});
