// Outages for end-to-end tests: a TCP proxy in front of PostgreSQL or Temporal that a test stops
// (connections refused, open ones cut) and starts again on the same port, the way a dependency that
// restarts looks to a service. The dependency itself is real; only the path to it goes down.
import net from 'node:net';

export interface TcpOutage {
  port: number;
  /** Closes the listener (new connections are refused) and cuts every open connection. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function tcpProxy(target: { host: string; port: number }): Promise<TcpOutage> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const stop = async () => {
    const closed = new Promise<void>((r) => server.close(() => r()));
    for (const s of sockets) s.destroy();
    sockets.clear();
    await closed;
  };
  return { port, stop, start: () => listen(port), close: () => (server.listening ? stop() : Promise.resolve()) };
}
