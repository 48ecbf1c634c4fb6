import { AddressInfo, connect, createServer, Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** From now on no byte goes through either way, on open connections or new ones: a frozen server. */
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

/** A TCP proxy on loopback in front of `targetPort`, that can freeze as a hung server does. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let frozen = false;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    track(client);
    track(upstream);
    client.on('data', (chunk: Buffer) => {
      if (!frozen) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!frozen) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    freeze: () => (frozen = true),
    thaw: () => (frozen = false),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
