/**
 * Receiving a statement upload: the file's format (given or detected), its parse (every statement
 * of the file, or the JSON form's one), the checks a file cannot fail and be stored, then the upload.
 * A malformed file is a 422 naming where, and nothing is stored.
 */
import type { Logger } from 'pino';
import { ValidationError, type UploadedFile } from '@rp/platform';
import type { CashAppDeps } from '../deps.js';
import {
  checkStatements,
  fromJsonStatement,
  jsonStatementShape,
  StatementParseError,
  storedFile,
  type CsvMapping,
  type ParsedFile,
  type StatementFormat,
  type StoredStatement,
} from '../parsers/index.js';
import { refuseNul } from '../parsers/nul.js';
import { uploadStatement } from './bank-statements.js';
import { discardUnusedStatementObject, streamedObjectKey } from './statement-files.js';
import { parseOnThread } from './statement-parse-pool.js';

/** The bytes in shared memory, which a worker thread reads without a copy of its own (a streamed upload's are already). */
function sharedBytes(bytes: Buffer): Buffer {
  if (bytes.buffer instanceof SharedArrayBuffer) return bytes;
  const shared = Buffer.from(new SharedArrayBuffer(bytes.length));
  bytes.copy(shared);
  return shared;
}

/** An upload as the route validated it: a multipart file (with its format, mapping and charset) or the JSON form's fields. */
export interface StatementUploadRequest {
  file?: UploadedFile;
  format?: StatementFormat;
  mapping?: CsvMapping;
  charset?: string;
}

/** `transactions[1].amount` (where the JSON form's parse names a field) as a `loc` path: transactions, 1, amount. */
function jsonPath(where: string): (string | number)[] {
  return [...where.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]));
}

/**
 * Parses and checks the upload, then stores its statements and starts their processing
 * (uploadStatement). A file the route streamed to object storage as it arrived is removed again
 * when the upload stores no file row (refused, a duplicate, failed): nothing of it stays behind.
 */
export async function receiveStatementUpload(
  deps: Pick<CashAppDeps, 'db' | 'temporal' | 'config' | 'storage'>,
  who: { organizationId: string; uploadedBy: string | null },
  body: StatementUploadRequest,
  log?: Logger,
) {
  const objectKey = streamedObjectKey(body.file);
  let result: Awaited<ReturnType<typeof storeUpload>> | undefined;
  try {
    result = await storeUpload(deps, who, body, objectKey);
    return result;
  } finally {
    if (objectKey && !result?.fileStored) await discardUnusedStatementObject(deps, who.organizationId, objectKey, log);
  }
}

async function storeUpload(
  deps: Pick<CashAppDeps, 'db' | 'temporal' | 'config'>,
  who: { organizationId: string; uploadedBy: string | null },
  body: StatementUploadRequest,
  objectKey: string | null,
) {
  const fields = body as Record<string, unknown>;
    let format: StatementFormat;
    let content: Buffer;
    let stored: { statements: StoredStatement[]; encoding?: string };
    let sha256: string | undefined;
    let fileName: string | null = null;
    const options: Record<string, unknown> = {};
    try {
      if (body.file) {
        fileName = body.file.filename;
        if (body.mapping) options.mapping = body.mapping;
        if (body.charset) options.charset = body.charset;
        // Parsed on a worker thread (a large file must not stall the service), the bytes shared with it, not copied.
        content = sharedBytes(body.file.content);
        ({ format, sha256, ...stored } = await parseOnThread(deps.config, { bytes: content, ...(body.format ? { format: body.format } : {}), options }));
      } else {
        format = 'json';
        const doc = Object.fromEntries(Object.keys(jsonStatementShape).map((k) => [k, fields[k]]));
        content = Buffer.from(JSON.stringify(doc));
        const parsed: ParsedFile = { statements: [fromJsonStatement(doc as Parameters<typeof fromJsonStatement>[0])] };
        try {
          checkStatements(parsed);
        } catch (err) {
          // the JSON form has one statement: what its balances contradict is said at `closing_balance`
          if (err instanceof StatementParseError) throw new StatementParseError('closing_balance', err.problem);
          throw err;
        }
        // (a file's NUL bytes are refused on its thread)
        refuseNul(null, parsed, options);
        stored = storedFile(parsed);
      }
    } catch (err) {
      if (err instanceof StatementParseError) {
        const loc = body.file ? ['body', 'file', err.where] : ['body', ...jsonPath(err.where)];
        throw new ValidationError([{ loc, msg: `${err.where}: ${err.problem}`, type: 'statement_invalid' }], `The ${format!} statement is malformed at ${err.where}: ${err.problem}`);
      }
      throw err;
    }
    return uploadStatement(deps, { organizationId: who.organizationId, uploadedBy: who.uploadedBy, format: format!, fileName, content, objectKey, ...(sha256 ? { sha256 } : {}), options, ...stored! });
}
