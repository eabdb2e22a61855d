import { z } from 'zod';
import type { RouteDef } from './route.js';
import type { EventDeclaration } from '../events/declare.js';
import { buildWebhooks } from './openapi-webhooks.js';

type JsonSchema = Record<string, unknown>;

/**
 * What the kernel refuses in every input string (PostgreSQL cannot store U+0000): documented on each
 * request string that has no stricter pattern or format of its own, so generated clients and fuzzers
 * know about it.
 */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';

/** JavaScript's String.prototype.trim white space (ECMAScript WhiteSpace and LineTerminator), as a regex class body. */
const TRIMMED = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
/** A trimmed string that must not be empty: some character other than white space (and no NUL). */
export const NOT_BLANK_PATTERN = `^[^\\u0000]*[^\\u0000${TRIMMED}][^\\u0000]*$`;

/** Whether a string schema trims its value (a `.trim()` overwrite) before its length checks. */
function trims(schema: unknown): boolean {
  const checks = (schema as { _zod?: { def?: { checks?: { _zod: { def: { check: string; tx?: (v: string) => string } } }[] } } })._zod?.def?.checks ?? [];
  return checks.some((c) => c._zod.def.check === 'overwrite' && c._zod.def.tx?.(' x ') === 'x');
}

const SCHEMA_PREFIX = '#/components/schemas/';

/** Any JSON value without a NUL in its strings or keys: what the kernel accepts where a schema leaves values open. */
const NUL_FREE_JSON = 'NulFreeJson';
const nulFreeJson: JsonSchema = {
  description: 'Any JSON value whose strings and object keys contain no NUL character (U+0000) and no lone UTF-16 surrogate.',
  anyOf: [
    { type: 'string', pattern: NO_NUL_PATTERN },
    { type: ['number', 'boolean', 'null'] },
    { type: 'array', items: { $ref: SCHEMA_PREFIX + NUL_FREE_JSON } },
    { type: 'object', propertyNames: { pattern: NO_NUL_PATTERN }, additionalProperties: { $ref: SCHEMA_PREFIX + NUL_FREE_JSON } },
  ],
};

function pascal(operationId: string): string {
  return operationId.replace(/(^|[^A-Za-z0-9])([A-Za-z0-9])/g, (_, __, c: string) => c.toUpperCase()).replace(/^[a-z]/, (c) => c.toUpperCase());
}

/** The named component of a schema (`.meta({ id })`), if it has one. */
export function schemaId(schema: z.ZodType): string | undefined {
  const id = z.globalRegistry.get(schema)?.id;
  return typeof id === 'string' ? id : undefined;
}

function walk(node: unknown, fn: (o: JsonSchema) => void): void {
  if (Array.isArray(node)) for (const n of node) walk(n, fn);
  else if (node && typeof node === 'object') {
    fn(node as JsonSchema);
    for (const v of Object.values(node as JsonSchema)) walk(v, fn);
  }
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as JsonSchema).sort().map((k) => `${JSON.stringify(k)}:${stableJson((v as JsonSchema)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * Turns zod schemas into JSON Schema with every named schema (`.meta({ id })`) lifted into
 * `components.schemas` and referenced by `$ref`. The same id converted for requests (`input`: defaults
 * make fields optional) and responses (`output`) can differ; the request variant is then `<id>Input`.
 * Two different schemas under one name are a programming error and throw.
 */
export class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};

  constructor(initial: Record<string, JsonSchema> = {}) {
    Object.assign(this.schemas, initial);
  }

  /**
   * `name`: the component name to use when the schema has no id of its own (route bodies and
   * responses are always components). `params`: query/path parameters (strings on the wire that the
   * route coerces): a coercing pipe is documented by its target type (integer with bounds, …).
   */
  ref(schema: z.ZodType, io: 'input' | 'output', opts: { name?: string; params?: boolean; openValues?: boolean } = {}): JsonSchema {
    const out = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io,
      unrepresentable: 'any',
      override: (ctx) => {
        const def = (ctx.zodSchema as unknown as { _zod: { def: { type: string; out?: z.ZodType } } })._zod.def;
        const js = ctx.jsonSchema as JsonSchema;
        if (opts.params && io === 'input' && def.type === 'pipe' && def.out && (def.out as unknown as { _zod: { def: { type: string } } })._zod.def.type !== 'transform') {
          const target = z.toJSONSchema(def.out, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' }) as JsonSchema;
          delete target.$schema;
          const description = js.description;
          for (const k of Object.keys(js)) delete js[k];
          Object.assign(js, target, description === undefined ? {} : { description });
        }
        if (io === 'input' && js.type === 'string' && js.pattern === undefined && js.format === undefined && js.enum === undefined && js.const === undefined) {
          // `.trim().min(1)`: what counts is the trimmed text, so at least one character that is not white space
          js.pattern = trims(ctx.zodSchema) && typeof js.minLength === 'number' && js.minLength >= 1 ? NOT_BLANK_PATTERN : NO_NUL_PATTERN;
        }
        // the kernel refuses NUL in object keys too, and anywhere in values the schema leaves open
        if (io === 'input' && !opts.openValues) {
          if (js.type === 'object') {
            js.propertyNames ??= { pattern: NO_NUL_PATTERN };
            js.additionalProperties ??= { $ref: SCHEMA_PREFIX + NUL_FREE_JSON };
          }
          if ((def.type === 'unknown' || def.type === 'any') && Object.keys(js).every((k) => k === 'description')) js.$ref = SCHEMA_PREFIX + NUL_FREE_JSON;
        }
      },
    }) as JsonSchema;
    delete out.$schema;
    const defs = (out.$defs ?? {}) as Record<string, JsonSchema>;
    delete out.$defs;
    const rename = new Map<string, string>();
    for (const [id, def] of Object.entries(defs)) rename.set(id, this.placeName(id, def, io, defs));
    const fix = (node: unknown) =>
      walk(node, (o) => {
        if (typeof o.$ref === 'string' && o.$ref.startsWith('#/$defs/')) o.$ref = SCHEMA_PREFIX + (rename.get(o.$ref.slice('#/$defs/'.length)) ?? o.$ref);
      });
    fix(out);
    for (const [id, def] of Object.entries(defs)) {
      fix(def);
      this.schemas[rename.get(id)!] = def;
    }
    if (out.$ref || !opts.name || opts.params) return out;
    const name = this.placeName(opts.name, out, io, {});
    this.schemas[name] = out;
    return { $ref: SCHEMA_PREFIX + name };
  }

  /** The component name for `id`: itself when free or identical, `<id>Input` for a differing request variant. */
  private placeName(id: string, def: JsonSchema, io: 'input' | 'output', defs: Record<string, JsonSchema>): string {
    // refs inside `def` still point at #/$defs: compare with them rewritten the way they will be
    const normalized = (d: JsonSchema) => stableJson(JSON.parse(JSON.stringify(d).replaceAll('"#/$defs/', `"${SCHEMA_PREFIX}`)));
    for (const candidate of io === 'input' ? [id, `${id}Input`] : [id]) {
      const existing = this.schemas[candidate];
      if (!existing || stableJson(existing) === normalized(def)) return candidate;
    }
    void defs;
    throw new Error(`OpenAPI: two different schemas are named ${id}`);
  }
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No content',
  401: 'Missing, malformed, unknown, revoked or expired bearer token',
  403: 'Authenticated, but the credential or role may not call this endpoint',
  404: 'Entity not found (also for another organization\'s records)',
  409: 'Conflict with the current state',
  413: 'Request body too large (a compressed body, Content-Encoding gzip or deflate, counts with its inflated size; through the gateway, a body within its limit on the bytes sent is read to its end even when refused early, and the connection serves the next request; a body beyond that limit, declared or streamed, is not read on and the connection is closed after this answer)',
  415: 'Unsupported content type',
  422: 'Request validation failed (also: a NUL character (U+0000) or a lone UTF-16 surrogate such as the JSON escape "\\ud800" in any string or object key (`nul_character`, `lone_surrogate`), percent-escapes of the path or query that are not UTF-8 such as %ED%A0%80 (`invalid_utf8`; never read as U+FFFD), an id that is not a UUID, an email beyond RFC limits)',
  429: 'Rate limit exceeded; see Retry-After',
  500: 'Unexpected error',
  502: 'The owning service could not be reached',
  503: 'A service this operation needs (database, workflow engine) is temporarily unavailable; nothing was changed. Retry after the seconds in Retry-After',
  504: 'The owning service did not answer in time',
};

const problemV2 = {
  type: 'object',
  description: 'Error body of /v2 endpoints (problem details: `type` is a stable identifier of the kind of error).',
  required: ['type', 'status', 'title', 'detail'],
  properties: {
    type: { type: 'string', examples: ['entity-not-found'] },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    title: { type: 'string' },
    detail: { type: ['string', 'null'] },
    errors: {
      type: 'array',
      description: 'Present on request-validation errors: one entry per problem.',
      items: { $ref: `${SCHEMA_PREFIX}ValidationIssue` },
    },
  },
};

export const baseComponents: Record<string, JsonSchema> = {
  [NUL_FREE_JSON]: nulFreeJson,
  ProblemV2: problemV2,
  ValidationIssue: {
    type: 'object',
    description: 'One problem of a request: where (`loc`: location, then the path inside it) and what.',
    required: ['loc', 'msg', 'type'],
    properties: {
      loc: { type: 'array', items: { type: ['string', 'integer'] }, examples: [['body', 'tiers', 0, 'days']] },
      msg: { type: 'string' },
      type: { type: 'string' },
    },
  },
  ProblemV1: {
    type: 'object',
    description: 'Error body of /v1 endpoints.',
    required: ['data', 'error', 'message'],
    properties: { data: { type: 'object' }, error: { type: 'string' }, message: { type: 'string' } },
  },
  ValidationProblemV1: {
    type: 'object',
    description: 'Validation error body of /v1 endpoints: detail[location][field] lists the messages.',
    required: ['detail', 'message'],
    properties: {
      detail: { type: 'object', additionalProperties: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } },
      message: { type: 'string' },
    },
  },
};

/** An error response of a /v1 (`v1`) or /v2 path, with the schema of its body. */
export function errorResponse(status: number, v1: boolean): JsonSchema {
  const ref = v1 ? (status === 422 ? 'ValidationProblemV1' : 'ProblemV1') : 'ProblemV2';
  const response: JsonSchema = { description: STATUS_TEXT[status] ?? 'Error', content: { 'application/json': { schema: { $ref: `${SCHEMA_PREFIX}${ref}` } } } };
  if (status === 429 || status === 503) {
    response.headers = { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } } };
  }
  return response;
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

export type OpenApiDocument = {
  openapi: string;
  info: OpenApiInfo;
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
  /** the events the platform POSTs to webhook endpoints, by type (./openapi-webhooks.ts) */
  webhooks?: Record<string, unknown>;
  security?: unknown[];
  tags?: unknown[];
};

/** A service's document: its routes as `paths`, the events it declares (ServiceModule.events) as `webhooks`. */
export function buildOpenApi(info: OpenApiInfo, routes: ReadonlyArray<RouteDef<never>>, events: readonly EventDeclaration[] = []): OpenApiDocument {
  const components = new SchemaComponents(baseComponents);
  // responses first: a schema named in both directions keeps its name for the response variant
  const successes = routes.map((r) => {
    const status = r.status ?? (r.response ? 200 : 204);
    const schema = r.response ? components.ref(r.response, 'output', { name: `${pascal(r.operationId)}Response` }) : null;
    return { status, schema };
  });
  const paths: Record<string, Record<string, unknown>> = {};
  routes.forEach((r, i) => {
    const v1 = r.path.startsWith('/v1/');
    const parameters: unknown[] = [];
    for (const [where, schema] of [['path', r.params], ['query', r.query]] as const) {
      if (!schema) continue;
      const js = components.ref(schema, 'input', { params: true });
      const props = (js.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((js.required as string[] | undefined) ?? []);
      for (const [name, prop] of Object.entries(props)) {
        const { description, ...rest } = paramSchema(prop);
        parameters.push({ name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema: rest });
      }
    }
    const { status, schema } = successes[i]!;
    const responses: Record<string, unknown> = {
      [status]: schema ? { description: STATUS_TEXT[status] ?? 'Success', content: { 'application/json': { schema } } } : { description: STATUS_TEXT[status] ?? 'Success' },
    };
    // 503: every operation reads or writes PostgreSQL (and some start Temporal workflows); an outage is 503 + Retry-After
    const errorStatuses = new Set<number>([401, 403, 429, 500, 503, ...(r.errors ?? [])]);
    if (r.params || r.query || r.body || r.rawBody) errorStatuses.add(422);
    if (r.params) errorStatuses.add(404); // an id of no record (or of another organization's)
    if (r.body || r.rawBody) {
      errorStatuses.add(413);
      errorStatuses.add(415);
    }
    for (const s of [...errorStatuses].sort()) responses[s] = errorResponse(s, v1);
    const auth = r.auth ?? {};
    const credentials = auth.credentials ?? ['user'];
    const who = auth.public
      ? 'no bearer token (a public route: the gateway lets it through unauthenticated and rate-limits it per client address)'
      : `${credentials.map((c) => (c === 'user' ? 'user access token' : 'organization API key')).join(' or ')}` +
      (auth.role === 'admin' ? ' of an organization admin' : '') +
      (auth.permission ? ` of an organization admin or of a member granted the \`${auth.permission}\` permission (others: 403)` : '');
    const operation: Record<string, unknown> = {
      operationId: r.operationId,
      summary: r.summary,
      description: [r.description, `Requires: ${who}.`].filter(Boolean).join('\n\n'),
      tags: r.tags,
      parameters,
      responses,
      'x-rp-auth': auth.public
        ? { role: 'any', credentials: [], public: true }
        : { role: auth.role ?? 'any', credentials, ...(auth.permission ? { permission: auth.permission } : {}) },
    };
    if (auth.public) operation.security = [];
    if (r.body) {
      const name = `${pascal(r.operationId)}Request`;
      const content: Record<string, unknown> = r.textBody
        ? { [r.textBody]: { schema: components.ref(r.body, 'input', { params: true }) } }
        : { 'application/json': { schema: components.ref(r.multipart?.json ?? r.body, 'input', { name, openValues: r.perRecordBody }) } };
      if (r.multipart) {
        content['multipart/form-data'] = { schema: r.multipart.schema ? components.ref(r.multipart.schema, 'input', { name: `${pascal(r.operationId)}Form` }) : { type: 'object' } };
      }
      // a body schema that accepts no body at all (an optional object) documents the body as optional
      operation.requestBody = { required: !r.body.safeParse(undefined).success, content };
    }
    if (r.rawBody) {
      const content = Object.fromEntries(
        Object.entries(r.rawBody.mediaTypes).map(([type, schema], n) => [type, { schema: components.ref(schema, 'input', { name: `${pascal(r.operationId)}Body${n ? n + 1 : ''}` }) }]),
      );
      operation.requestBody = { required: true, content };
    }
    (paths[r.path] ??= {})[r.method] = operation;
  });
  const webhooks = events.length ? buildWebhooks(components, events) : undefined;
  return {
    openapi: '3.1.0',
    info,
    paths,
    ...(webhooks ? { webhooks } : {}),
    components: {
      schemas: components.schemas,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'A user access token (rpu_…) or an organization API key (rpk_…), issued with `npm run cli`.',
        },
      },
    },
    security: [{ bearerAuth: [] }],
  };
}

/** A parameter's schema: a nullable one is just optional in a query string (there is no null there). */
function paramSchema(prop: JsonSchema): JsonSchema {
  const anyOf = prop.anyOf as JsonSchema[] | undefined;
  if (anyOf && anyOf.length === 2 && anyOf.some((s) => s.type === 'null')) {
    const { anyOf: _drop, ...rest } = prop;
    void _drop;
    return { ...rest, ...anyOf.find((s) => s.type !== 'null')! };
  }
  return prop;
}

/**
 * Merge several service documents into one (the gateway's /openapi.json). Component schemas must not
 * clash: two services may share a component only when it is the same schema (the error bodies). Each
 * event type is recorded by one service, so two services declaring one webhook is an error too.
 */
export function mergeOpenApi(info: OpenApiInfo, docs: OpenApiDocument[]): OpenApiDocument {
  const merged: OpenApiDocument = { openapi: '3.1.0', info, paths: {}, components: { schemas: {}, securitySchemes: {} }, security: [{ bearerAuth: [] }] };
  const webhooks: Record<string, unknown> = {};
  for (const doc of docs) {
    for (const [path, ops] of Object.entries(doc.paths)) merged.paths[path] = { ...(merged.paths[path] ?? {}), ...ops };
    for (const [type, hook] of Object.entries(doc.webhooks ?? {})) {
      if (type in webhooks) throw new Error(`OpenAPI: webhook ${type} is declared by two services (${info.title})`);
      webhooks[type] = hook;
    }
    for (const [kind, entries] of Object.entries(doc.components ?? {})) {
      const into = (merged.components[kind] ??= {});
      for (const [name, value] of Object.entries(entries)) {
        if (kind === 'schemas' && name in into && stableJson(into[name]) !== stableJson(value)) {
          throw new Error(`OpenAPI: component schema ${name} is declared differently by two services (${info.title})`);
        }
        into[name] = value;
      }
    }
  }
  merged.paths = Object.fromEntries(Object.entries(merged.paths).sort(([a], [b]) => a.localeCompare(b)));
  if (Object.keys(webhooks).length) merged.webhooks = Object.fromEntries(Object.entries(webhooks).sort(([a], [b]) => a.localeCompare(b)));
  merged.components.schemas = Object.fromEntries(Object.entries(merged.components.schemas ?? {}).sort(([a], [b]) => a.localeCompare(b)));
  return merged;
}
