import Koa from 'koa';
import Router from '@koa/router';
import { koaBody } from 'koa-body';
import type { Logger } from 'pino';
import {
  ForbiddenError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  RouteNotFoundError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../errors.js';
import { IDENTITY_HEADER, verifyIdentity, type Identity } from '../identity.js';
import { requestContext } from '../logger.js';
import { buildOpenApi, type OpenApiDocument, type OpenApiInfo } from './openapi.js';
import { koaPath, type RouteDef } from './route.js';
import { check, throwIfIssues } from './validation.js';
import { createHttpMetrics, errorMiddleware, requestContextMiddleware, type BaseState } from './middleware.js';
import type { ValidationIssue } from '../errors.js';

export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
}

export interface ServiceAppOptions<D> {
  name: string;
  info: OpenApiInfo;
  routes: RouteDef<D>[];
  deps: D;
  log: Logger;
  identitySecret: string;
  identityMaxAgeSeconds: number;
  bodyLimitBytes: number;
  readiness: ReadinessCheck[];
}

export interface ServiceApp {
  app: Koa<BaseState>;
  openapi: OpenApiDocument;
}

const OPEN_PATHS = new Set(['/healthz', '/readyz', '/metrics', '/openapi.json']);

/**
 * A domain service's Koa app: request context → errors → signed-identity check → body parsing →
 * validated routes, plus /healthz, /readyz, /metrics and /openapi.json.
 */
export function createServiceApp<D>(opts: ServiceAppOptions<D>): ServiceApp {
  const app = new Koa<BaseState>();
  app.proxy = true;
  app.silent = true;
  const metrics = createHttpMetrics(opts.name);
  const openapi = buildOpenApi(opts.info, opts.routes);

  app.use(requestContextMiddleware(opts.log, metrics));
  app.use(errorMiddleware(opts.log));

  app.use(async (ctx, next) => {
    if (ctx.path === '/healthz') {
      ctx.state.quiet = true;
      ctx.body = { status: 'ok', service: opts.name };
      return;
    }
    if (ctx.path === '/readyz') {
      ctx.state.quiet = true;
      const results = await Promise.all(
        opts.readiness.map(async (r) => {
          try {
            await withTimeout(r.check(), 2000);
            return [r.name, 'ok'] as const;
          } catch (err) {
            opts.log.warn({ err, check: r.name }, 'readiness check failed');
            return [r.name, 'unavailable'] as const;
          }
        }),
      );
      const ok = results.every(([, s]) => s === 'ok');
      ctx.status = ok ? 200 : 503;
      ctx.body = { status: ok ? 'ready' : 'not-ready', service: opts.name, checks: Object.fromEntries(results) };
      return;
    }
    if (ctx.path === '/metrics') {
      ctx.state.quiet = true;
      ctx.type = metrics.registry.contentType;
      ctx.body = await metrics.registry.metrics();
      return;
    }
    if (ctx.path === '/openapi.json') {
      ctx.body = openapi;
      return;
    }
    await next();
  });

  // Only the gateway may call a service: it signs the caller's identity.
  app.use(async (ctx, next) => {
    if (OPEN_PATHS.has(ctx.path)) return next();
    const result = verifyIdentity(ctx.get(IDENTITY_HEADER) || undefined, opts.identitySecret, opts.identityMaxAgeSeconds);
    if (!result.ok) {
      opts.log.warn({ reason: result.reason, path: ctx.path }, 'request without a valid gateway identity');
      throw new UnauthorizedError('Requests must come through the API gateway with a valid bearer token.');
    }
    ctx.state.identity = result.identity;
    const store = requestContext.getStore();
    if (store) {
      store.organizationId = result.identity.org;
      store.userId = result.identity.sub;
    }
    await next();
  });

  const parseBody = koaBody({
    jsonLimit: opts.bodyLimitBytes,
    formLimit: opts.bodyLimitBytes,
    textLimit: opts.bodyLimitBytes,
    jsonStrict: true,
    includeUnparsed: false,
    onError: (err: Error & { status?: number; type?: string }) => {
      if (err.status === 413) throw new PayloadTooLargeError(opts.bodyLimitBytes);
      throw new ValidationError([{ loc: ['body'], msg: `Malformed JSON body: ${err.message}`, type: 'json_invalid' }]);
    },
  });

  const router = new Router<BaseState>();
  for (const route of opts.routes) {
    router[route.method](route.operationId, koaPath(route.path), async (ctx, next) => {
      ctx.state.routeName = route.path;
      const identity = ctx.state.identity as Identity;
      authorize(route, identity);
      if (route.body) {
        if (hasBody(ctx) && !ctx.is('application/json', '+json')) {
          throw new UnsupportedMediaTypeError('Send the request body as application/json.');
        }
        await parseBody(ctx, async () => {});
      }
      await next();
    }, async (ctx) => {
      const issues: ValidationIssue[] = [];
      const params = check('path', route.params, ctx.params, issues);
      const query = check('query', route.query, { ...ctx.query }, issues);
      const rawBody = route.body && hasBody(ctx) ? ctx.request.body : undefined;
      const body = check('body', route.body, rawBody, issues);
      throwIfIssues(issues);
      const identity = ctx.state.identity as Identity;
      const result = await route.handler({
        params,
        query,
        body,
        identity,
        requestId: ctx.state.requestId,
        log: opts.log.child({ route: route.operationId }),
        deps: opts.deps,
        koa: ctx as unknown as Koa.Context,
      });
      const status = route.status ?? (route.response ? 200 : 204);
      ctx.status = status;
      if (status !== 204) ctx.body = result;
    });
  }
  app.use(router.routes());
  app.use(async (ctx) => {
    const allowed = router.stack.filter((l) => l.match(ctx.path) && l.methods.length).flatMap((l) => l.methods);
    if (allowed.length) throw new MethodNotAllowedError(ctx.method, ctx.path, [...new Set(allowed)].filter((m) => m !== 'HEAD'));
    throw new RouteNotFoundError(ctx.method, ctx.path);
  });
  return { app, openapi };
}

function authorize(route: RouteDef<never> | RouteDef<unknown>, identity: Identity): void {
  const allowed = route.auth?.credentials ?? ['user'];
  if (!allowed.includes(identity.kind)) {
    throw new ForbiddenError(
      identity.kind === 'api_key'
        ? 'This endpoint requires a user access token; organization API keys may not call it.'
        : 'This endpoint requires an organization API key.',
    );
  }
  if (route.auth?.role === 'admin' && identity.role !== 'admin') {
    throw new ForbiddenError('This endpoint is restricted to organization admins.');
  }
}

function hasBody(ctx: Koa.Context | Koa.ParameterizedContext<BaseState>): boolean {
  return Boolean(ctx.get('transfer-encoding')) || Number(ctx.get('content-length') || 0) > 0;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
