import http from 'node:http';
import Koa from 'koa';
import {
  anonymousIdentity,
  createDb,
  createHttpMetrics,
  createLogger,
  closeServer,
  CredentialResolver,
  listen,
  errorMiddleware,
  IDENTITY_HEADER,
  RateLimitedError,
  REQUEST_ID_HEADER,
  requestContextMiddleware,
  RouteNotFoundError,
  requireMetricsToken,
  UnauthorizedError,
  type BaseState,
  type OpenApiDocument,
} from '@rp/platform';
import type { GatewayConfig } from './config.js';
import { authenticate, authenticateCached, IdentitySigner } from './auth.js';
import { ClientAddress } from './client-address.js';
import { createAgent, proxyRequest } from './proxy.js';
import { RateLimiter } from './rate-limit.js';
import { UpstreamReadiness } from './readiness.js';

import { adminWriteMayChangeCredentials, inboundOrganization, isPublicRoute, serviceFor, upstreams, type ServiceName } from './route-table.js';
import { serveDocs } from './docs.js';
import { gatewayOpenApi, UPLOAD_PATHS } from './openapi.js';

export interface Gateway {
  port: number;
  server: http.Server;
  close: () => Promise<void>;
}

export async function startGateway(config: GatewayConfig, opts: { port?: number; host?: string } = {}): Promise<Gateway> {
  const log = createLogger('api-gateway', config.LOG_LEVEL);
  const db = createDb({ url: config.DATABASE_URL, poolMax: 10, applicationName: 'api-gateway', statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS });
  const metrics = createHttpMetrics('api-gateway');
  const lookups = metrics.counter('gateway_credential_lookups_total', 'Bearer-token look-ups that reached the database');
  const refusedUnlooked = metrics.counter(
    'gateway_auth_failure_limited_total',
    'Requests refused with 429 because their client address had too many failed authentications (no look-up made)',
  );
  const syncs = metrics.counter('gateway_credential_syncs_total', 'Credential-cache syncs awaited before answering a successful admin write');
  const resolver = new CredentialResolver({ db, databaseUrl: config.DATABASE_URL, log, cacheTtlMs: config.AUTH_CACHE_TTL_MS, onLookup: () => lookups.inc() });
  await resolver.start();
  const limiter = new RateLimiter(config.RATE_LIMIT_PER_SECOND, config.RATE_LIMIT_BURST);
  // Failed authentications per client address: checked before the credential look-up.
  const failures = new RateLimiter(config.AUTH_FAILURE_PER_MINUTE / 60, config.AUTH_FAILURE_BURST);
  // Public routes (no bearer token: accepting an invite) per client address.
  const publicLimiter = new RateLimiter(config.PUBLIC_RATE_LIMIT_PER_MINUTE / 60, config.PUBLIC_RATE_LIMIT_BURST);
  // The inbound mail endpoint, per organization (providers post from shared address pools).
  const inboundLimiter = new RateLimiter(config.INBOUND_RATE_LIMIT_PER_MINUTE / 60, config.INBOUND_RATE_LIMIT_BURST);
  const clientAddress = new ClientAddress(config.TRUSTED_PROXIES);
  const targets = upstreams(config);
  const readiness = new UpstreamReadiness({ targets, cacheMs: config.READYZ_CACHE_MS, timeoutMs: config.READYZ_UPSTREAM_TIMEOUT_MS });
  const agent = createAgent();
  const signer = new IdentitySigner(config.IDENTITY_SECRET, Object.keys(targets));

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
    const doc = gatewayOpenApi(
      config,
      docs.filter((d): d is OpenApiDocument => d !== null),
      missing,
    );
    if (!missing.length) openapiCache = { doc, at: Date.now() };
    return doc;
  }

  const app = new Koa<BaseState>();
  // X-Forwarded-* are believed only from TRUSTED_PROXIES (ClientAddress), never from anyone.
  app.proxy = false;
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
        // Ready = can serve: its own database (credentials) and every upstream service's /readyz.
        // 503 names what is not ready; /healthz (liveness) checks nothing.
        ctx.state.quiet = true;
        const [database, services] = await Promise.all([
          db.raw('select 1').then(
            () => 'ok',
            () => 'unavailable',
          ),
          readiness.states(),
        ]);
        const notReady = [...(database === 'ok' ? [] : ['database']), ...Object.keys(services).filter((n) => services[n as ServiceName] !== 'ok').sort()];
        ctx.status = notReady.length ? 503 : 200;
        ctx.body = {
          status: notReady.length ? 'not-ready' : 'ready',
          service: 'api-gateway',
          checks: { database, ...services },
          ...(notReady.length ? { not_ready: notReady } : {}),
        };
        return;
      }
      case '/metrics':
        ctx.state.quiet = true;
        requireMetricsToken(ctx.get('authorization') || undefined, config.METRICS_TOKEN);
        ctx.type = metrics.registry.contentType;
        ctx.body = await metrics.registry.metrics();
        return;
      case '/openapi.json':
        ctx.body = await openapi();
        return;
    }
    if (ctx.path === '/docs' || ctx.path.startsWith('/docs/')) {
      if (serveDocs(ctx as unknown as Koa.Context)) return;
      throw new RouteNotFoundError(ctx.method, ctx.path);
    }
    await next();
  });

  app.use(async (ctx) => {
    const client = clientAddress.of(ctx.req);
    const authorization = ctx.get('authorization') || undefined;
    let identity;
    const inboundOrg = inboundOrganization(ctx.method, ctx.path);
    const open = inboundOrg !== null || isPublicRoute(ctx.method, ctx.path);
    const locked = failures.wait(client);
    if (inboundOrg !== null) {
      // No bearer token: the inbound secret (HTTP Basic or X-Inbound-Secret) is forwarded and
      // verified by admin. An address over its failed-authentication budget is refused first.
      const wait = Math.max(locked, inboundLimiter.take(inboundOrg));
      if (wait > 0) throw new RateLimitedError(wait, `Too many inbound messages for this organization or failed authentications from this address; retry after ${wait} s.`);
      identity = anonymousIdentity();
    } else if (open) {
      // No bearer token on this route (any Authorization header is ignored, never looked up): the
      // address's budget of public requests and of failed authentications applies instead.
      const wait = Math.max(locked, publicLimiter.take(client));
      if (wait > 0) throw new RateLimitedError(wait, `Too many requests from this address; retry after ${wait} s.`);
      identity = anonymousIdentity();
    } else if (locked > 0) {
      // Over its budget of failed authentications: no credential look-up for this address; only a
      // token already cached as valid is served (a legitimate user behind the same address).
      identity = authenticateCached(authorization, resolver);
      if (!identity) {
        refusedUnlooked.inc();
        throw new RateLimitedError(locked, `Too many failed authentications from this address; retry after ${locked} s.`);
      }
    } else {
      try {
        identity = await authenticate(authorization, resolver);
      } catch (err) {
        if (err instanceof UnauthorizedError) failures.take(client);
        throw err;
      }
    }
    ctx.state.identity = identity;
    const wait = open ? 0 : limiter.take(identity.cred);
    if (wait > 0) throw new RateLimitedError(wait);
    const service = serviceFor(ctx.path);
    if (!service) throw new RouteNotFoundError(ctx.method, ctx.path);
    ctx.state.routeName = `proxy:${service}`;
    await proxyRequest(ctx as unknown as Koa.Context, {
      target: targets[service],
      agent,
      headers: { [IDENTITY_HEADER]: signer.sign(identity, service, { method: ctx.method, target: ctx.originalUrl }), [REQUEST_ID_HEADER]: ctx.state.requestId },
      clientAddress: client,
      timeoutMs: config.UPSTREAM_TIMEOUT_MS,
      bodyLimitBytes:
        inboundOrg !== null ? config.INBOUND_BODY_LIMIT_BYTES : ctx.method === 'POST' && UPLOAD_PATHS.has(ctx.path) ? config.UPLOAD_LIMIT_BYTES : config.BODY_LIMIT_BYTES,
      keepAuthorization: inboundOrg !== null,
      // A successful write to admin may revoke or change credentials (deactivation, key revocation,
      // role and access changes): this gateway applies the invalidation before answering, so the
      // caller's next request already sees it. Writes of the collections configuration cannot
      // change credentials and skip it (route-table.ts CREDENTIAL_NEUTRAL_ADMIN_PREFIXES).
      ...(service === 'admin' && ctx.method !== 'GET' && ctx.method !== 'HEAD' && adminWriteMayChangeCredentials(ctx.path)
        ? {
            beforeRespond: async (status: number) => {
              if (status >= 300) return;
              syncs.inc();
              await resolver.sync();
            },
          }
        : {}),
    });
    // A refused invite token or inbound secret is a failed authentication of this address. A refused
    // secret does not spend the organization's inbound budget: whoever knows an organization's id
    // could otherwise block its mail; the address's failed-authentication budget bounds them instead.
    if (open && ctx.status === 401) failures.take(client);
    if (inboundOrg !== null && ctx.status === 401) inboundLimiter.refund(inboundOrg);
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
