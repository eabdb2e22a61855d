import type { Writable } from 'node:stream';
import type Koa from 'koa';
import type { z } from 'zod';
import type { Logger } from 'pino';
import type { CredentialKind } from '../auth/tokens.js';
import type { Identity } from '../identity.js';
import type { Permission } from '../auth/permissions.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface AuthRequirement {
  /** 'admin': only organization admins (members get 403). Default: any role. */
  role?: 'admin';
  /** Which bearer credentials may call the route. Default: user access tokens only. */
  credentials?: CredentialKind[];
  /**
   * A route that moves or rewrites money: organization admins, or members granted this permission
   * (auth/permissions.ts); anyone else gets 403. Documented in the operation and its `x-rp-auth`.
   */
  permission?: Permission;
  /**
   * A public route: no bearer token. The gateway lets exactly the routes of its PUBLIC_ROUTES table
   * through without authentication (rate-limited per client address) and signs an anonymous identity
   * for them; every other route refuses an anonymous identity (401). The handler authenticates the
   * request by its own means (an invite token in the body).
   */
  public?: true;
}

/** A file of a multipart upload, as routes with `multipart` receive it in their body. */
export interface UploadedFile {
  filename: string | null;
  mimetype: string | null;
  size: number;
  content: Buffer;
  /** With `multipart.streamFile`: what the route's target made of the bytes (its `result()`), e.g. where it stored them. */
  streamed?: unknown;
}

/** Where a streamed file part's bytes go as they arrive (see RouteDef.multipart.streamFile). */
export interface StreamedFileTarget {
  /** receives the bytes in order; its backpressure holds the request */
  writable: Writable;
  /** after the writable finished: what the handler receives as the file's `streamed` */
  result(): Promise<unknown>;
  /** the request is refused (too large, malformed, invalid fields) or the handler gives it up: undo what the bytes did */
  discard(): Promise<void>;
}

export interface HandlerContext<D, P, Q, B> {
  params: P;
  query: Q;
  body: B;
  identity: Identity;
  requestId: string;
  log: Logger;
  deps: D;
  koa: Koa.Context;
}

export interface RouteDef<D = unknown, PS extends z.ZodType = z.ZodType, QS extends z.ZodType = z.ZodType, BS extends z.ZodType = z.ZodType, RS extends z.ZodType = z.ZodType> {
  method: HttpMethod;
  /** OpenAPI-style path, e.g. `/v2/business-units/{business_unit_id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth?: AuthRequirement;
  params?: PS;
  query?: QS;
  body?: BS;
  /**
   * Media type of a raw text body (e.g. `text/csv`) instead of JSON: the handler's body is the request
   * text, validated by `body` (a string schema). Other content types get 415.
   */
  textBody?: string;
  /** Schema of the success body; omit for an empty (204) response. */
  response?: RS;
  /** Success status; default 200 (204 when there is no response schema). */
  status?: number;
  /**
   * Also accept `multipart/form-data` (file uploads) on this route, up to `maxBytes` per request
   * (which is also this route's JSON body limit). Each uploaded file is read into memory and put in
   * the body under its field name as an {@link UploadedFile}; the other form fields are strings.
   * `body` validates both forms; `schema` (optional) documents the multipart form in OpenAPI (declare
   * file fields `z.string().meta({ format: 'binary' })`) and `json` (optional) the JSON form.
   */
  multipart?: {
    maxBytes: number;
    schema?: z.ZodType;
    json?: z.ZodType;
    /**
     * Stream file parts instead of parking them in temporary files: each file's bytes go, as they
     * arrive, to the target this returns (null: memory only) and into memory, where the file's
     * `content` ends up in shared memory (a SharedArrayBuffer: a worker thread reads it without a
     * copy). A request refused before its handler runs has its targets discarded; from the handler
     * on, the handler owns what they stored (see http/streaming-upload.ts).
     */
    streamFile?: (file: { field: string; filename: string | null; mimetype: string | null; identity: Identity; deps: D }) => StreamedFileTarget | null;
  };
  /**
   * The handler reads the request body itself from `koa.req`, unparsed (e.g. a raw MIME message, whose
   * bytes must reach storage exactly as sent): the kit only refuses other media types (415) and
   * documents each listed one with its schema in OpenAPI. Exclusive with `body`.
   */
  rawBody?: { mediaTypes: Record<string, z.ZodType> };
  /**
   * The body is a JSON array of records that the handler validates one by one, answering a result per
   * record (the middleware pushes): the kernel's no-NUL rule is then not applied to the array's items
   * (a bad record must not fail its batch); the handler applies it per record with `findNul`.
   */
  perRecordBody?: boolean;
  /** Extra error statuses worth documenting beyond the ones every route has. */
  errors?: number[];
  handler: (c: HandlerContext<D, z.output<PS>, z.output<QS>, z.output<BS>>) => Promise<RS extends z.ZodType ? z.input<RS> : void>;
}

/** Typed route declaration for a service whose handlers receive dependencies `D`. */
export function routeFor<D>() {
  return function route<PS extends z.ZodType = z.ZodUndefined, QS extends z.ZodType = z.ZodUndefined, BS extends z.ZodType = z.ZodUndefined, RS extends z.ZodType = z.ZodVoid>(
    def: RouteDef<D, PS, QS, BS, RS>,
  ): RouteDef<D> {
    return def as unknown as RouteDef<D>;
  };
}
