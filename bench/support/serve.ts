/**
 * One server of a benchmark, in its own process (as deployed: docker-compose.yml runs each service's
 * API in its own container): `<service>-api` (admin, integrations, cash-app, knowledge), `gateway`,
 * `bare-proxy` or `bare-koa`. Prints LISTENING <port>.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { startServiceApi } from '@rp/platform';
import type { CommonConfig, ServiceModule } from '@rp/platform';
import { loadGatewayConfig, startGateway, type ServiceName } from '@rp/api-gateway';
import { SERVICE_MODULES } from '../../scripts/local/services.js';

const role = process.argv[2];
let port: number;

const service = role?.endsWith('-api') ? (role.slice(0, -'-api'.length) as ServiceName) : undefined;
if (service && service in SERVICE_MODULES) {
  const entry = SERVICE_MODULES[service];
  port = (await startServiceApi(entry.module as ServiceModule<CommonConfig, unknown>, entry.config(process.env as Record<string, string>), { port: 0 })).port;
} else if (role === 'gateway') {
  port = (await startGateway(loadGatewayConfig(), { port: 0 })).port;
} else if (role === 'bare-proxy') {
  // The floor any gateway pays here: parse the request, open/keep an upstream connection, stream both ways. No logic.
  const upstreamPort = Number(process.env.UPSTREAM_PORT);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer((req, res) => {
    const up = http.request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers, agent }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => {
      res.statusCode = 502;
      res.end();
    });
    req.pipe(up);
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
} else if (role === 'bare-koa') {
  // The framework's floor: a plain Koa app answering, per path, the JSON body the real service answered
  // for it (BARE_BODIES: {"<path>": <body>}, captured once by the benchmark). No database, no middleware.
  const bodies = new Map(Object.entries(JSON.parse(process.env.BARE_BODIES ?? '{}') as Record<string, unknown>));
  const app = new Koa();
  app.use((ctx) => {
    const body = bodies.get(ctx.path);
    if (body === undefined) ctx.status = 404;
    else ctx.body = body;
  });
  const handle = app.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
} else {
  throw new Error(`unknown role ${role}`);
}
process.stdout.write(`LISTENING ${port}\n`);
for (const s of ['SIGTERM', 'SIGINT'] as const) process.on(s, () => process.exit(0));
