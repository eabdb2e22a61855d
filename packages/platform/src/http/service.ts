import { readFile, unlink } from 'node:fs/promises';
import Koa from 'koa';
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
import { deriveIdentityKey, IDENTITY_HEADER, verifyIdentity, type Identity } from '../identity.js';
import { hasPermission } from '../auth/permissions.js';
import { requestContext } from '../logger.js';
import { buildOpenApi, type OpenApiDocument, type OpenApiInfo } from './openapi.js';
import type { RouteDef, UploadedFile } from './route.js';
import type { EventDeclaration } from '../events/declare.js';
import { check, throwIfIssues } from './validation.js';
import { invalidTextIssues, undecodableUrlIssues } from './input-rules.js';
import { PathRouter } from './router.js';
import { multipartLimits, parseStreamingMultipart } from './streaming-upload.js';
import { createHttpMetrics, errorMiddleware, requestContextMiddleware, requireMetricsToken, type BaseState } from './middleware.js';
import type { ValidationIssue } from '../errors.js';

export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
}

export interface ServiceAppOptions<D> {
  name: string;
  info: OpenApiInfo;
  routes: RouteDef<D>[];
  /** the events the service records, documented as the OpenAPI `webhooks` */
  events?: readonly EventDeclaration[];
  deps: D;
  log: Logger;
  identitySecret: string;
  identityMaxAgeSeconds: number;
  /** bearer token a scraper must send to GET /metrics (METRICS_TOKEN); unset: nobody may scrape */
  metricsToken?: string | null;
  bodyLimitBytes: number;
  readiness: ReadinessCheck[];
}

export interface ServiceApp {
  app: Koa<BaseState>;
  openapi: OpenApiDocument;
}

/** Paths without a gateway identity (/metrics checks its own scrape token). */
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
  const openapi = buildOpenApi(opts.info, opts.routes, opts.events);

  app.use(requestContextMiddleware(opts.log, metrics));
  app.use(closeUnreadBody);
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
      requireMetricsToken(ctx.get('authorization') || undefined, opts.metricsToken);
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

  // Only the gateway may call a service: it signs the caller's identity for this service (its own
  // key, derived once here), this method and this path and query.
  const identityKey = deriveIdentityKey(opts.identitySecret, opts.name);
  app.use(async (ctx, next) => {
    if (OPEN_PATHS.has(ctx.path)) return next();
    const result = verifyIdentity(ctx.get(IDENTITY_HEADER) || undefined, identityKey, { method: ctx.method, target: ctx.originalUrl }, opts.identityMaxAgeSeconds);
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
      throw new ValidationError([{ loc: ['body'], msg: `Malformed JSON body: ${withoutExcerpt(err.message)}`, type: 'json_invalid' }]);
    },
  });

  // Raw text bodies (routes with `textBody`, e.g. text/csv): koa-body's text parser, any text/* type.
  const parseText = koaBody({
    json: false,
    urlencoded: false,
    text: true,
    textLimit: opts.bodyLimitBytes,
    includeUnparsed: false,
    onError: (err: Error & { status?: number }) => {
      if (err.status === 413) throw new PayloadTooLargeError(opts.bodyLimitBytes);
      throw new ValidationError([{ loc: ['body'], msg: `Unreadable body: ${err.message}`, type: 'body_invalid' }]);
    },
  });

  const uploadParsers = new Map<number, { json: Koa.Middleware; multipart: Koa.Middleware }>();
  const uploadParser = (maxBytes: number) => {
    let p = uploadParsers.get(maxBytes);
    if (!p) {
      const onError = (err: Error & { status?: number; httpCode?: number }) => {
        if (err.status === 413 || err.httpCode === 413) throw new PayloadTooLargeError(maxBytes);
        throw new ValidationError([{ loc: ['body'], msg: `Malformed request body: ${withoutExcerpt(err.message)}`, type: 'body_invalid' }]);
      };
      p = {
        json: koaBody({ jsonLimit: maxBytes, jsonStrict: true, includeUnparsed: false, onError }),
        multipart: koaBody({
          multipart: true,
          formLimit: maxBytes,
          formidable: multipartLimits(maxBytes),
          onError,
        }),
      };
      uploadParsers.set(maxBytes, p);
    }
    return p;
  };

  // Deterministic routing (./router.ts): the most specific template wins, fixed segments over
  // `{captures}`; a method it does not declare is 405 with exactly its methods in `Allow`.
  type Handle = (ctx: Koa.ParameterizedContext<BaseState>, pathParams: Record<string, string>, rawPathParams: Record<string, string>) => Promise<void>;
  const router = new PathRouter<Handle>();
  for (const route of opts.routes) {
    // Built once per route, not per request: its lines carry the request's id through the logger's mixin.
    const routeLog = opts.log.child({ route: route.operationId });
    router.add(route.method, route.path, async (ctx, pathParams, rawPathParams) => {
      ctx.state.routeName = route.path;
      const identity = ctx.state.identity as Identity;
      authorize(route, identity);
      let discardStreamed: (() => Promise<void>) | undefined;
      if (route.body && route.multipart) {
        const isMultipart = hasBody(ctx) && ctx.is('multipart/form-data');
        if (hasBody(ctx) && !isMultipart && !ctx.is('application/json', '+json')) {
          throw new UnsupportedMediaTypeError('Send the request body as application/json or multipart/form-data.');
        }
        const parsers = uploadParser(route.multipart.maxBytes);
        const { streamFile } = route.multipart;
        if (isMultipart && streamFile) {
          discardStreamed = await parseStreamingMultipart(ctx as unknown as Koa.Context, route.multipart.maxBytes, (f) => streamFile({ ...f, identity, deps: opts.deps }));
        } else if (isMultipart) {
          await parsers.multipart(ctx as unknown as Koa.Context, async () => {});
          await readUploadedFiles(ctx as unknown as Koa.Context);
        } else await parsers.json(ctx as unknown as Koa.Context, async () => {});
      } else if (route.body && route.textBody) {
        if (hasBody(ctx) && !ctx.is(route.textBody)) throw new UnsupportedMediaTypeError(`Send the request body as ${route.textBody}.`);
        await parseText(ctx, async () => {});
      } else if (route.rawBody) {
        const types = Object.keys(route.rawBody.mediaTypes);
        if (hasBody(ctx) && !ctx.is(types)) throw new UnsupportedMediaTypeError(`Send the request body as ${types.join(' or ')}.`);
      } else if (route.body) {
        if (hasBody(ctx) && !ctx.is('application/json', '+json')) {
          throw new UnsupportedMediaTypeError('Send the request body as application/json.');
        }
        await parseBody(ctx, async () => {});
      }

      const issues: ValidationIssue[] = [];
      const rawQuery = route.query ? { ...ctx.query } : undefined;
      const rawBody = route.body && hasBody(ctx) ? ctx.request.body : undefined;
      // No NUL (U+0000) and no lone UTF-16 surrogate anywhere in what the route reads: one walk per
      // part, before the schemas; nor percent-escapes of the URL that are not UTF-8 (Node would read
      // them as U+FFFD).
      if (route.params || route.query) undecodableUrlIssues(route.query ? ctx.querystring : '', route.params ? rawPathParams : {}, issues);
      if (route.params) invalidTextIssues('path', pathParams, issues);
      if (route.query) invalidTextIssues('query', rawQuery, issues);
      if (route.body) invalidTextIssues('body', rawBody, issues, { skipTopLevelItems: route.perRecordBody === true });
      const params = check('path', route.params, pathParams, issues);
      const query = check('query', route.query, rawQuery, issues);
      const body = check('body', route.body, rawBody, issues);
      if (issues.length) await discardStreamed?.();
      throwIfIssues(issues);
      const result = await route.handler({
        params,
        query,
        body,
        identity,
        requestId: ctx.state.requestId,
        log: routeLog,
        deps: opts.deps,
        koa: ctx as unknown as Koa.Context,
      });
      const status = route.status ?? (route.response ? 200 : 204);
      ctx.status = status;
      if (status !== 204) {
        // JSON `null` is an answer (e.g. settings never configured): Koa would turn a null body into 204.
        if (result === null) {
          ctx.type = 'application/json';
          ctx.body = 'null';
        } else ctx.body = result;
      }
    });
  }
  app.use(async (ctx) => {
    const match = router.match(ctx.method, ctx.path);
    if (!match) throw new RouteNotFoundError(ctx.method, ctx.path);
    if (!match.handler) throw new MethodNotAllowedError(ctx.method, ctx.path, match.allowed);
    await match.handler(ctx, match.params, match.rawParams);
  });
  return { app, openapi };
}

/**
 * An answer given before the request body was read to its end (a body refused at its limit once
 * inflated, a malformed upload) closes the connection: the unread bytes would otherwise be read as
 * the start of the next request on this keep-alive connection — the gateway's, shared by every
 * organization — which would wait for its answer until the gateway gives up. Reading the rest
 * instead could mean reading up to the gateway's limit for nothing. A body never started (refused
 * before parsing, e.g. 401) is discarded by Node itself and keeps the connection.
 */
async function closeUnreadBody(ctx: Koa.ParameterizedContext<BaseState>, next: Koa.Next): Promise<void> {
  await next();
  if (!ctx.req.complete && ctx.req.readableFlowing !== null) ctx.set('Connection', 'close');
}

function authorize(route: RouteDef<never> | RouteDef<unknown>, identity: Identity): void {
  if (route.auth?.public) return;
  if (identity.kind === 'anonymous') throw new UnauthorizedError('Missing bearer token; send "Authorization: Bearer <token>".');
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
  const permission = route.auth?.permission;
  if (permission && !hasPermission(identity, permission)) {
    throw new ForbiddenError(`This endpoint requires an organization admin or a user granted the \`${permission}\` permission.`);
  }
}

interface FormidableFile {
  filepath: string;
  originalFilename?: string | null;
  mimetype?: string | null;
  size: number;
}

/** Moves a multipart request's files from formidable's temp files into the body as UploadedFile. */
async function readUploadedFiles(ctx: Koa.Context): Promise<void> {
  const files = (ctx.request as unknown as { files?: Record<string, FormidableFile | FormidableFile[]> }).files ?? {};
  const body: Record<string, unknown> = { ...((ctx.request.body as Record<string, unknown> | undefined) ?? {}) };
  for (const [field, value] of Object.entries(files)) {
    const list = Array.isArray(value) ? value : [value];
    const read: UploadedFile[] = [];
    for (const f of list) {
      try {
        read.push({ filename: f.originalFilename ?? null, mimetype: f.mimetype ?? null, size: f.size, content: await readFile(f.filepath) });
      } finally {
        await unlink(f.filepath).catch(() => {});
      }
    }
    body[field] = read.length === 1 ? read[0] : read;
  }
  (ctx.request as unknown as { body: unknown }).body = body;
}

/**
 * V8's JSON.parse messages quote an excerpt of the input (`Unexpected token 's', ..."api_key":sk-li"... is
 * not valid JSON`), which may hold a secret the client sent: the answer keeps the problem, not the excerpt.
 */
function withoutExcerpt(message: string): string {
  return message.replace(/,\s*(?:\.\.\.)?"[\s\S]*"(?:\.\.\.)?\s+is not valid JSON\s*$/, ' (the body is not valid JSON)');
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
