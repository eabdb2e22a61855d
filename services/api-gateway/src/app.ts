import http from 'node:http';
import Koa from 'koa';
import {
  createDb,
  createHttpMetrics,
  createLogger,
  closeServer,
  CredentialResolver,
  listen,
  errorMiddleware,
  errorResponse,
  IDENTITY_HEADER,
  mergeOpenApi,
  RateLimitedError,
  REQUEST_ID_HEADER,
  requestContextMiddleware,
  RouteNotFoundError,
  type BaseState,
  type OpenApiDocument,
} from '@rp/platform';
import type { GatewayConfig } from './config.js';
import { authenticate, IdentitySigner } from './auth.js';
import { createAgent, proxyRequest } from './proxy.js';
import { RateLimiter } from './rate-limit.js';

/** POST endpoints that take file uploads and get UPLOAD_LIMIT_BYTES instead of BODY_LIMIT_BYTES. */
export const UPLOAD_PATHS = new Set(['/v2/bank-statements']);
import { serviceFor, upstreams, type ServiceName } from './route-table.js';
import { docsPage } from './docs.js';

export interface Gateway {
  port: number;
  server: http.Server;
  close: () => Promise<void>;
}

export async function startGateway(config: GatewayConfig, opts: { port?: number; host?: string } = {}): Promise<Gateway> {
  const log = createLogger('api-gateway', config.LOG_LEVEL);
  const db = createDb({ url: config.DATABASE_URL, poolMax: 10, applicationName: 'api-gateway' });
  const resolver = new CredentialResolver({ db, databaseUrl: config.DATABASE_URL, log, cacheTtlMs: config.AUTH_CACHE_TTL_MS });
  await resolver.start();
  const limiter = new RateLimiter(config.RATE_LIMIT_PER_SECOND, config.RATE_LIMIT_BURST);
  const targets = upstreams(config);
  const metrics = createHttpMetrics('api-gateway');
  const agent = createAgent();
  const signer = new IdentitySigner(config.IDENTITY_SECRET);

  let openapiCache: { doc: OpenApiDocument; at: number } | null = null;
  async function openapi(): Promise<OpenApiDocument> {
    if (openapiCache && Date.now() - openapiCache.at < 30_000) return openapiCache.doc;
    const names = Object.keys(targets) as ServiceName[];
    const docs = await Promise.all(
      names.map(async (name) => {
        try {
          const res = await fetch(new URL('/openapi.json', targets[name]), { signal: AbortSignal.timeout(3000) });
          return res.ok ? ((await res.json()) as OpenApiDocument) : null;
        } catch {
          return null;
        }
      }),
    );
    const missing = names.filter((_, i) => !docs[i]);
    const doc = mergeOpenApi(
      {
        title: 'Receivables Platform API',
        version: '2.0.0',
        description:
          'Accounts receivable, cash application, collections and knowledge, behind one gateway. Every endpoint requires ' +
          '`Authorization: Bearer <token>`. Errors of /v2 endpoints use `{type, status, title, detail, errors?}`; /v1 endpoints use ' +
          '`{data, error, message}` (validation: `{detail, message}`). Pagination: `page` (0-indexed) and `page_size` (alias `size`), ' +
          'envelope `{data, current_page, total_records, next_page}`. Rate limit: per credential, ' +
          `${config.RATE_LIMIT_PER_SECOND}/s sustained with bursts of ${config.RATE_LIMIT_BURST}; 429 with Retry-After beyond it. ` +
          `Request bodies: at most ${config.BODY_LIMIT_BYTES} bytes (413 beyond); file uploads (${[...UPLOAD_PATHS].join(', ')}) at most ${config.UPLOAD_LIMIT_BYTES} bytes.` +
          (missing.length ? `\n\nNot listed (service unreachable while this document was built): ${missing.join(', ')}.` : ''),
      },
      docs.filter((d): d is OpenApiDocument => d !== null),
    );
    // every operation goes through the proxy: the owning service may be unreachable or too slow
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const op of Object.values(ops) as { responses: Record<string, unknown> }[]) {
        for (const status of [502, 504]) op.responses[status] ??= errorResponse(status, path.startsWith('/v1/'));
      }
    }
    if (!missing.length) openapiCache = { doc, at: Date.now() };
    return doc;
  }

  const app = new Koa<BaseState>();
  app.proxy = true;
  app.silent = true;
  app.use(requestContextMiddleware(log, metrics, { asyncContext: false }));
  app.use(errorMiddleware(log));
  app.use(async (ctx, next) => {
    switch (ctx.path) {
      case '/healthz':
        ctx.state.quiet = true;
        ctx.body = { status: 'ok', service: 'api-gateway' };
        return;
      case '/readyz': {
        ctx.state.quiet = true;
        let database = 'ok';
        try {
          await db.raw('select 1');
        } catch {
          database = 'unavailable';
        }
        ctx.status = database === 'ok' ? 200 : 503;
        ctx.body = { status: database === 'ok' ? 'ready' : 'not-ready', service: 'api-gateway', checks: { database } };
        return;
      }
      case '/metrics':
        ctx.state.quiet = true;
        ctx.type = metrics.registry.contentType;
        ctx.body = await metrics.registry.metrics();
        return;
      case '/openapi.json':
        ctx.body = await openapi();
        return;
      case '/docs':
      case '/docs/':
        ctx.type = 'html';
        ctx.body = docsPage;
        return;
    }
    await next();
  });

  app.use(async (ctx) => {
    const identity = await authenticate(ctx.get('authorization') || undefined, resolver);
    ctx.state.identity = identity;
    const wait = limiter.take(identity.cred);
    if (wait > 0) throw new RateLimitedError(wait);
    const service = serviceFor(ctx.path);
    if (!service) throw new RouteNotFoundError(ctx.method, ctx.path);
    ctx.state.routeName = `proxy:${service}`;
    await proxyRequest(ctx as unknown as Koa.Context, {
      target: targets[service],
      agent,
      headers: { [IDENTITY_HEADER]: signer.sign(identity), [REQUEST_ID_HEADER]: ctx.state.requestId },
      timeoutMs: config.UPSTREAM_TIMEOUT_MS,
      bodyLimitBytes: ctx.method === 'POST' && UPLOAD_PATHS.has(ctx.path) ? config.UPLOAD_LIMIT_BYTES : config.BODY_LIMIT_BYTES,
    });
  });

  const { server, port } = await listen(app, opts.port ?? config.PORT, opts.host ?? process.env.HOST ?? '127.0.0.1');
  log.info({ port }, 'gateway listening');
  return {
    port,
    server,
    close: async () => {
      await closeServer(server);
      agent.destroy();
      await resolver.close();
      await db.destroy();
    },
  };
}
