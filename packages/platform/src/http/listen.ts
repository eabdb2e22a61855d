import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

/** Serve a Koa app over HTTP; resolves once listening, with the bound port (port 0 picks a free one). */
export async function listen<S>(app: Koa<S>, port: number, host = '127.0.0.1'): Promise<{ server: http.Server; port: number }> {
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's callback handles its own rejections
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}

/** Stop accepting connections, close idle keep-alive ones, and resolve when the server is closed. */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
