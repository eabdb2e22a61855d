/**
 * Multipart parsing for routes with `multipart.streamFile` (route.ts): each file part's bytes go,
 * as they arrive, to the route's target (e.g. object storage) and into memory — never through a
 * temporary file read back afterwards. The file's bytes end in shared memory (a SharedArrayBuffer),
 * so a worker thread reads them without a copy. Limits, the 413 and the 422 of a malformed body are
 * the kit's multipart parser's (service.ts); a request refused on the way discards what its targets
 * stored.
 */
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type Koa from 'koa';
import { koaBody } from 'koa-body';
import { AppError, PayloadTooLargeError, ServiceUnavailableError, ValidationError } from '../errors.js';
import { OUTAGE_RETRY_AFTER_SECONDS } from '../failures.js';
import type { StreamedFileTarget, UploadedFile } from './route.js';

type FormidableOptions = NonNullable<NonNullable<Parameters<typeof koaBody>[0]>['formidable']>;

/**
 * The limits and part rule of every multipart body the kit parses (buffered or streamed): at most
 * `maxBytes` in all, 10 files, 200 fields. A part with a filename but no Content-Type header of its own
 * (Python `requests`, many scripts) is a file, not a text field: formidable tells the two apart by the
 * Content-Type alone. RFC 7578 4.4: a file part's type defaults to text/plain;
 * application/octet-stream keeps its bytes as they are.
 */
export function multipartLimits(maxBytes: number): FormidableOptions {
  return {
    maxFileSize: maxBytes,
    maxTotalFileSize: maxBytes,
    maxFiles: 10,
    maxFields: 200,
    allowEmptyFiles: true,
    minFileSize: 0,
    onPart: (part, handle) => {
      if (!part.mimetype && typeof part.originalFilename === 'string') part.mimetype = 'application/octet-stream';
      handle(part);
    },
  };
}

/** What the route's `streamFile` is told of a file part when it begins. */
export interface StreamedFileInfo {
  field: string;
  filename: string | null;
  mimetype: string | null;
}

/** A target's failure, carried through formidable's error path to the answer. */
class TargetFailed extends Error {
  constructor(readonly original: unknown) {
    super('the upload target failed');
  }
}

/** Receives one file part: keeps its bytes and hands them to the route's target, with its backpressure. */
class FilePartSink extends Writable {
  private readonly chunks: Buffer[] = [];
  size = 0;

  constructor(readonly target: StreamedFileTarget | null) {
    super();
    target?.writable.on('error', () => {}); // its failure reaches the writer through write/finished
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    const t = this.target?.writable;
    if (!t || t.write(chunk)) return callback();
    const onDrain = () => {
      t.off('error', onError);
      callback();
    };
    const onError = (err: Error) => {
      t.off('drain', onDrain);
      callback(new TargetFailed(err));
    };
    t.once('drain', onDrain).once('error', onError);
  }

  override _final(callback: (err?: Error | null) => void): void {
    const t = this.target?.writable;
    if (!t) return callback();
    t.end();
    finished(t).then(
      () => callback(),
      (err: unknown) => callback(new TargetFailed(err)),
    );
  }

  /** The bytes, in shared memory. */
  content(): Buffer {
    const shared = Buffer.from(new SharedArrayBuffer(this.size));
    let at = 0;
    for (const c of this.chunks) at += c.copy(shared, at);
    this.chunks.length = 0;
    return shared;
  }
}

/**
 * Parses the multipart body of `ctx` into `ctx.request.body` (fields as strings, files as
 * UploadedFile with `streamed` set to their target's result). Returns a function that discards what
 * the targets stored, for the caller to run when it refuses the request before its handler.
 */
export async function parseStreamingMultipart(
  ctx: Koa.Context,
  maxBytes: number,
  streamFile: (file: StreamedFileInfo) => StreamedFileTarget | null,
): Promise<() => Promise<void>> {
  const sinks = new Map<object, FilePartSink>();
  // formidable announces a file part's field (fileBegin) just before it asks for its write stream
  const fieldOf = new WeakMap<object, string>();
  const discard = async () => {
    await Promise.all([...sinks.values()].map((sink) => (sink.target ? sink.target.discard().catch(() => undefined) : Promise.resolve())));
  };
  let failure: unknown;
  const parse = koaBody({
    multipart: true,
    formLimit: maxBytes,
    formidable: {
      ...multipartLimits(maxBytes),
      onFileBegin: (field, file) => {
        fieldOf.set(file, field);
      },
      fileWriteStreamHandler: (file) => {
        const f = file as unknown as { originalFilename?: string | null; mimetype?: string | null };
        const sink = new FilePartSink(streamFile({ field: fieldOf.get(file as object) ?? '', filename: f.originalFilename ?? null, mimetype: f.mimetype ?? null }));
        sinks.set(file as object, sink);
        return sink;
      },
    },
    onError: (err: Error & { status?: number; httpCode?: number }) => {
      failure = err;
      throw err;
    },
  });
  try {
    await parse(ctx, async () => {});
  } catch {
    await discard();
    const err = failure as (Error & { status?: number; httpCode?: number; cause?: unknown }) | undefined;
    const target = [err, err?.cause].find((e): e is TargetFailed => e instanceof TargetFailed);
    if (target) {
      if (target.original instanceof AppError) throw target.original;
      throw new ServiceUnavailableError(OUTAGE_RETRY_AFTER_SECONDS, 'The uploaded file could not be stored; nothing was kept. Upload it again.');
    }
    if (err?.status === 413 || err?.httpCode === 413) throw new PayloadTooLargeError(maxBytes);
    throw new ValidationError([{ loc: ['body'], msg: `Malformed request body: ${err?.message ?? 'unreadable'}`, type: 'body_invalid' }]);
  }
  try {
    const files = (ctx.request as unknown as { files?: Record<string, object | object[]> }).files ?? {};
    const body: Record<string, unknown> = { ...((ctx.request.body as Record<string, unknown> | undefined) ?? {}) };
    for (const [field, value] of Object.entries(files)) {
      const read: UploadedFile[] = [];
      for (const file of Array.isArray(value) ? value : [value]) {
        const sink = sinks.get(file);
        if (!sink) continue;
        const f = file as { originalFilename?: string | null; mimetype?: string | null };
        read.push({
          filename: f.originalFilename ?? null,
          mimetype: f.mimetype ?? null,
          size: sink.size,
          content: sink.content(),
          ...(sink.target ? { streamed: await sink.target.result() } : {}),
        });
      }
      body[field] = read.length === 1 ? read[0] : read;
    }
    (ctx.request as unknown as { body: unknown }).body = body;
  } catch (err) {
    await discard();
    throw err;
  }
  return discard;
}
