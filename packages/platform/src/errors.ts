/**
 * Application errors and their two wire shapes.
 *
 * v2 (`/v2/...` and everything not v1): `{type, status, title, detail, errors?}`.
 * v1 (`/v1/...`): `{data, error, message}`; validation errors `{detail: {<location>: {<field>: [msg]}}, message}`.
 */

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class AppError extends Error {
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly detail: string | null;
  readonly headers: Record<string, string>;

  constructor(opts: { status: number; type: string; title: string; detail?: string | null; headers?: Record<string, string> }) {
    super(opts.detail ?? opts.title);
    this.name = new.target.name;
    this.status = opts.status;
    this.type = opts.type;
    this.title = opts.title;
    this.detail = opts.detail ?? null;
    this.headers = opts.headers ?? {};
  }
}

export class ValidationError extends AppError {
  readonly errors: ValidationIssue[];
  constructor(errors: ValidationIssue[], detail = 'The request is not valid; see errors for each problem.') {
    super({ status: 422, type: 'request-validation', title: 'Request validation failed', detail });
    this.errors = errors;
  }
}

export class NotFoundError extends AppError {
  constructor(detail: string | null = null) {
    super({ status: 404, type: 'entity-not-found', title: 'Entity not found', detail });
  }
}

export class RouteNotFoundError extends AppError {
  constructor(method: string, path: string) {
    super({ status: 404, type: 'route-not-found', title: 'Route not found', detail: `No endpoint ${method} ${path}.` });
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(method: string, path: string, allowed: string[]) {
    super({
      status: 405,
      type: 'method-not-allowed',
      title: 'Method not allowed',
      detail: `${method} is not supported on ${path}; use ${allowed.join(', ')}.`,
      headers: { Allow: allowed.join(', ') },
    });
  }
}

export class ConflictError extends AppError {
  constructor(detail: string) {
    super({ status: 409, type: 'conflict', title: 'Conflict', detail });
  }
}

export class UnauthorizedError extends AppError {
  constructor(detail: string) {
    super({ status: 401, type: 'unauthorized', title: 'Unauthorized', detail, headers: { 'WWW-Authenticate': 'Bearer' } });
  }
}

export class ForbiddenError extends AppError {
  constructor(detail: string) {
    super({ status: 403, type: 'forbidden', title: 'Forbidden', detail });
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super({
      status: 413,
      type: 'payload-too-large',
      title: 'Payload too large',
      detail: `The request body exceeds the limit of ${limitBytes} bytes.`,
    });
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(detail: string) {
    super({ status: 415, type: 'unsupported-media-type', title: 'Unsupported media type', detail });
  }
}

export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number, detail = `Rate limit exceeded for this credential; retry after ${retryAfterSeconds} s.`) {
    super({
      status: 429,
      type: 'rate-limited',
      title: 'Too many requests',
      detail,
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  }
}

export class UpstreamError extends AppError {
  constructor(status: 502 | 503 | 504, detail: string) {
    const titles = { 502: 'Bad gateway', 503: 'Service unavailable', 504: 'Gateway timeout' } as const;
    const types = { 502: 'bad-gateway', 503: 'service-unavailable', 504: 'gateway-timeout' } as const;
    super({ status, type: types[status], title: titles[status], detail });
  }
}

/**
 * A dependency (PostgreSQL, Temporal) is unavailable for now: 503 `service-unavailable` with
 * `Retry-After`, so a client waits a few seconds and retries instead of treating it as a defect.
 */
export class ServiceUnavailableError extends AppError {
  constructor(
    retryAfterSeconds: number,
    detail = `A service this request depends on is temporarily unavailable; nothing was changed. Retry in ${retryAfterSeconds} s.`,
  ) {
    super({ status: 503, type: 'service-unavailable', title: 'Service unavailable', detail, headers: { 'Retry-After': String(retryAfterSeconds) } });
  }
}

export class InternalError extends AppError {
  constructor() {
    super({
      status: 500,
      type: 'internal-error',
      title: 'Internal server error',
      detail: 'An unexpected error occurred; quote the X-Request-Id header when reporting it.',
    });
  }
}

export type ErrorShape = 'v1' | 'v2';

export function errorShapeForPath(path: string): ErrorShape {
  return path === '/v1' || path.startsWith('/v1/') ? 'v1' : 'v2';
}

export function v2ErrorBody(err: AppError): Record<string, unknown> {
  const body: Record<string, unknown> = { type: err.type, status: err.status, title: err.title, detail: err.detail };
  if (err instanceof ValidationError) body.errors = err.errors;
  return body;
}

export function v1ErrorBody(err: AppError): Record<string, unknown> {
  if (err instanceof ValidationError) {
    const detail: Record<string, Record<string, string[]>> = {};
    for (const issue of err.errors) {
      const [location, ...rest] = issue.loc;
      const loc = String(location ?? 'body');
      const field = rest.length ? rest.join('.') : '__root__';
      ((detail[loc] ??= {})[field] ??= []).push(issue.msg);
    }
    return { detail, message: err.detail ?? err.title };
  }
  return { data: {}, error: err.type, message: err.detail ?? err.title };
}

export function errorBody(err: AppError, shape: ErrorShape): Record<string, unknown> {
  return shape === 'v1' ? v1ErrorBody(err) : v2ErrorBody(err);
}
