import { z } from 'zod';
import type { RouteDef } from './route.js';

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return out;
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No content',
  401: 'Missing, malformed, unknown, revoked or expired bearer token',
  403: 'Authenticated, but the credential or role may not call this endpoint',
  404: 'Entity not found (also for another organization\'s records)',
  409: 'Conflict with the current state',
  413: 'Request body too large',
  415: 'Unsupported content type',
  422: 'Request validation failed (also: a NUL character (U+0000) in any string or object key, an id that is not a UUID, an email beyond RFC limits)',
  429: 'Rate limit exceeded; see Retry-After',
  500: 'Unexpected error',
  502: 'The owning service could not be reached',
  504: 'The owning service did not answer in time',
};

export const errorComponents = {
  ErrorV2: {
    type: 'object',
    description: 'Error body of /v2 endpoints.',
    required: ['type', 'status', 'title', 'detail'],
    properties: {
      type: { type: 'string', examples: ['entity-not-found'] },
      status: { type: 'integer' },
      title: { type: 'string' },
      detail: { type: ['string', 'null'] },
      errors: {
        type: 'array',
        description: 'Present on request-validation errors: one entry per problem.',
        items: {
          type: 'object',
          required: ['loc', 'msg', 'type'],
          properties: {
            loc: { type: 'array', items: { type: ['string', 'integer'] }, examples: [['body', 'tiers', 0, 'days']] },
            msg: { type: 'string' },
            type: { type: 'string' },
          },
        },
      },
    },
  },
  ErrorV1: {
    type: 'object',
    description: 'Error body of /v1 endpoints.',
    required: ['data', 'error', 'message'],
    properties: { data: { type: 'object' }, error: { type: 'string' }, message: { type: 'string' } },
  },
  ValidationErrorV1: {
    type: 'object',
    description: 'Validation error body of /v1 endpoints: detail[location][field] lists the messages.',
    required: ['detail', 'message'],
    properties: {
      detail: { type: 'object', additionalProperties: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } },
      message: { type: 'string' },
    },
  },
};

function errorResponse(status: number, v1: boolean): JsonSchema {
  const ref = v1 ? (status === 422 ? 'ValidationErrorV1' : 'ErrorV1') : 'ErrorV2';
  return { description: STATUS_TEXT[status] ?? 'Error', content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } };
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
  security?: unknown[];
  tags?: unknown[];
};

export function buildOpenApi(info: OpenApiInfo, routes: ReadonlyArray<RouteDef<never>>): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const v1 = r.path.startsWith('/v1/');
    const parameters: unknown[] = [];
    for (const [where, schema] of [['path', r.params], ['query', r.query]] as const) {
      if (!schema) continue;
      const js = jsonSchema(schema, 'input');
      const props = (js.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((js.required as string[] | undefined) ?? []);
      for (const [name, prop] of Object.entries(props)) {
        const { description, ...rest } = prop;
        parameters.push({ name, in: where, required: where === 'path' || required.has(name), description, schema: rest });
      }
    }
    const status = r.status ?? (r.response ? 200 : 204);
    const responses: Record<string, unknown> = {
      [status]: r.response
        ? { description: STATUS_TEXT[status] ?? 'Success', content: { 'application/json': { schema: jsonSchema(r.response, 'output') } } }
        : { description: STATUS_TEXT[status] ?? 'Success' },
    };
    const errorStatuses = new Set<number>([401, 403, 429, 500, ...(r.errors ?? [])]);
    if (r.params || r.query || r.body) errorStatuses.add(422);
    if (r.body) errorStatuses.add(413);
    for (const s of [...errorStatuses].sort()) responses[s] = errorResponse(s, v1);
    const auth = r.auth ?? {};
    const credentials = auth.credentials ?? ['user'];
    const who =
      `${credentials.map((c) => (c === 'user' ? 'user access token' : 'organization API key')).join(' or ')}` +
      (auth.role === 'admin' ? ' of an organization admin' : '') +
      (auth.permission ? ` of an organization admin or of a member granted the \`${auth.permission}\` permission (others: 403)` : '');
    const operation: Record<string, unknown> = {
      operationId: r.operationId,
      summary: r.summary,
      description: [r.description, `Requires: ${who}.`].filter(Boolean).join('\n\n'),
      tags: r.tags,
      parameters,
      responses,
      'x-rp-auth': { role: auth.role ?? 'any', credentials, ...(auth.permission ? { permission: auth.permission } : {}) },
    };
    if (r.body) {
      const content: Record<string, unknown> = { [r.textBody ?? 'application/json']: { schema: jsonSchema(r.body, 'input') } };
      if (r.multipart) content['multipart/form-data'] = { schema: r.multipart.schema ? jsonSchema(r.multipart.schema, 'input') : { type: 'object' } };
      // a body schema that accepts no body at all (an optional object) documents the body as optional
      operation.requestBody = { required: !r.body.safeParse(undefined).success, content };
    }
    (paths[r.path] ??= {})[r.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: {
      schemas: errorComponents,
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

/** Merge several service documents into one (the gateway's /openapi.json). */
export function mergeOpenApi(info: OpenApiInfo, docs: OpenApiDocument[]): OpenApiDocument {
  const merged: OpenApiDocument = { openapi: '3.1.0', info, paths: {}, components: { schemas: {}, securitySchemes: {} }, security: [{ bearerAuth: [] }] };
  for (const doc of docs) {
    for (const [path, ops] of Object.entries(doc.paths)) merged.paths[path] = { ...(merged.paths[path] ?? {}), ...ops };
    for (const [kind, entries] of Object.entries(doc.components ?? {})) {
      merged.components[kind] = { ...(merged.components[kind] ?? {}), ...entries };
    }
  }
  merged.paths = Object.fromEntries(Object.entries(merged.paths).sort(([a], [b]) => a.localeCompare(b)));
  return merged;
}
