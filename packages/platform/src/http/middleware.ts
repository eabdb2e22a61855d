import type Koa from 'koa';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import client from 'prom-client';
import { AppError, InternalError, ServiceUnavailableError, UnauthorizedError, errorBody, errorShapeForPath } from '../errors.js';
import { isTransientInfraError, OUTAGE_RETRY_AFTER_SECONDS } from '../failures.js';
import { REQUEST_ID_HEADER } from '../identity.js';
import { requestContext } from '../logger.js';

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

export interface BaseState {
  requestId: string;
  /** matched route template for metrics and logs */
  routeName?: string;
  /** skip the access log (health probes, metrics scrapes) */
  quiet?: boolean;
  /** the caller, once the signed identity (services) or bearer token (gateway) is verified */
  identity?: import('../identity.js').Identity;
}

/**
 * Outermost middleware: request id (accepted from the caller when well-formed), access log and
 * request metrics, and — unless `asyncContext` is false — an async context so every log line of
 * the request carries its id. The gateway turns that off: AsyncLocalStorage costs every promise
 * of the hot path, and the gateway logs nothing but the access line.
 */
export function requestContextMiddleware(log: Logger, metrics: HttpMetrics, opts: { asyncContext?: boolean } = {}): Koa.Middleware<BaseState> {
  const withContext = opts.asyncContext !== false;
  // One histogram child per (method, route template, status), looked up by a plain string key: a labels
  // object per observation costs a sort and a join of its keys every request.
  const observers = new Map<string, { observe: (v: number) => void }>();
  const observerOf = (method: string, route: string, status: string) => {
    const key = `${method} ${route} ${status}`;
    let o = observers.get(key);
    if (!o) {
      o = metrics.requests.labels({ method, route, status });
      observers.set(key, o);
    }
    return o;
  };
  return async (ctx, next) => {
    const incoming = ctx.get(REQUEST_ID_HEADER);
    const requestId = REQUEST_ID_RE.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set(REQUEST_ID_HEADER, requestId);
    const started = process.hrtime.bigint();
    try {
      await (withContext ? requestContext.run({ requestId }, next) : next());
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // Route templates only: raw paths would give the metric unbounded label values.
      observerOf(ctx.method, ctx.state.routeName ?? 'unmatched', String(ctx.status)).observe(seconds);
      if (!ctx.state.quiet) {
        log.info(
          { request_id: requestId, organization_id: ctx.state.identity?.org, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(seconds * 1000) },
          'request',
        );
      }
    }
  };
}

/**
 * Turns every error into the spec's body (v1 or v2 by path). An outage of a dependency (PostgreSQL
 * unreachable or restarting, the pool out of connections, Temporal unavailable: see
 * isTransientInfraError) is 503 `service-unavailable` with `Retry-After`; other unknown errors
 * become a bare 500.
 */
export function errorMiddleware(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (caught) {
      let err: AppError;
      if (caught instanceof AppError) err = caught;
      else if (isTransientInfraError(caught)) {
        log.warn({ err: caught }, 'dependency unavailable; answered 503');
        err = new ServiceUnavailableError(OUTAGE_RETRY_AFTER_SECONDS);
      } else {
        log.error({ err: caught }, 'unhandled error');
        err = new InternalError();
      }
      ctx.status = err.status;
      for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
      ctx.body = errorBody(err, errorShapeForPath(ctx.path));
    }
  };
}

export interface HttpMetrics {
  registry: client.Registry;
  requests: client.Histogram<'method' | 'route' | 'status'>;
  /** A plain counter in this registry (for a process's own events). */
  counter(name: string, help: string): { inc(n?: number): void };
}

export function createHttpMetrics(service: string): HttpMetrics {
  const registry = new client.Registry();
  registry.setDefaultLabels({ service });
  client.collectDefaultMetrics({ register: registry });
  const requests = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const counter = (name: string, help: string) => new client.Counter({ name, help, registers: [registry] });
  return { registry, requests, counter };
}

/**
 * `/metrics` is not public: a scraper sends `Authorization: Bearer <METRICS_TOKEN>`. Without a
 * configured token nothing may scrape. Throws 401 otherwise (compared in constant time).
 */
export function requireMetricsToken(authorization: string | undefined, token: string | null | undefined): void {
  const given = /^Bearer (\S+)$/i.exec(authorization?.trim() ?? '')?.[1];
  const digest = (v: string) => createHash('sha256').update(v).digest();
  if (!token || !given || !timingSafeEqual(digest(given), digest(token))) {
    throw new UnauthorizedError('/metrics requires the scrape token: send "Authorization: Bearer <METRICS_TOKEN>".');
  }
}
