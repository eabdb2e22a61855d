/**
 * Receiving a statement upload: the file's format (given or detected), its parse (every statement
 * of the file, or the JSON form's one), the checks a file cannot fail and be stored, then the upload.
 * A malformed file is a 422 naming where, and nothing is stored.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ValidationError, type UploadedFile } from '@rp/platform';
import type { CashAppDeps } from '../deps.js';
import {
  checkStatements,
  detectStatementFormat,
  fromJsonStatement,
  jsonStatementShape,
  parseStatementSteps,
  runParseAsync,
  StatementParseError,
  type CsvMapping,
  type ParsedFile,
  type StatementFormat,
} from '../parsers/index.js';
import { refuseNul } from '../parsers/nul.js';
import { uploadStatement } from './bank-statements.js';

/** An upload as the route validated it: a multipart file (with its format, mapping and charset) or the JSON form's fields. */
export interface StatementUploadRequest {
  file?: UploadedFile;
  format?: StatementFormat;
  mapping?: CsvMapping;
  charset?: string;
}

/**
 * The format of an uploaded file sent without `format` (see detectStatementFormat). With a mapping
 * and no other format recognised it is CSV; otherwise an unrecognised file is a 422 naming what was seen.
 */
function detectedFormat(content: Buffer, hasMapping: boolean): StatementFormat {
  const d = detectStatementFormat(content);
  if ('format' in d) return d.format;
  if (hasMapping) return 'csv';
  const msg =
    'csv' in d
      ? 'the file looks like CSV, which cannot be read without its column mapping: send `mapping` (format csv)'
      : `the format could not be detected from the file (${d.unknown}): send \`format\` (camt053, camt054, bai2, mt940, csv, json)`;
  throw new ValidationError([{ loc: ['body', 'format'], msg, type: 'format_undetected' }], `Statement format not detected: ${msg}.`);
}

/** `transactions[1].amount` (where the JSON form's parse names a field) as a `loc` path: transactions, 1, amount. */
function jsonPath(where: string): (string | number)[] {
  return [...where.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]));
}

/** Parses and checks the upload, then stores its statements and starts their processing (uploadStatement). */
export async function receiveStatementUpload(
  deps: Pick<CashAppDeps, 'db' | 'temporal'>,
  who: { organizationId: string; uploadedBy: string | null },
  body: StatementUploadRequest,
) {
  const fields = body as Record<string, unknown>;
    let format: StatementFormat;
    let content: Buffer;
    let parsed: ParsedFile;
    let fileName: string | null = null;
    const options: Record<string, unknown> = {};
    try {
      if (body.file) {
        content = body.file.content;
        format = body.format ?? detectedFormat(content, body.mapping !== undefined);
        fileName = body.file.filename;
        if (body.mapping) options.mapping = body.mapping;
        if (body.charset) options.charset = body.charset;
        // In batches with a turn of the event loop between them: a large file does not stall the service.
        parsed = await runParseAsync(parseStatementSteps(format, content, options), () => nextTurn());
        if (parsed.statements.length === 0) throw new StatementParseError('line 1', 'the file holds no statement');
      } else {
        format = 'json';
        const doc = Object.fromEntries(Object.keys(jsonStatementShape).map((k) => [k, fields[k]]));
        content = Buffer.from(JSON.stringify(doc));
        parsed = { statements: [fromJsonStatement(doc as Parameters<typeof fromJsonStatement>[0])] };
        try {
          checkStatements(parsed);
        } catch (err) {
          // the JSON form has one statement: what its balances contradict is said at `closing_balance`
          if (err instanceof StatementParseError) throw new StatementParseError('closing_balance', err.problem);
          throw err;
        }
      }
      checkStatements(parsed);
    } catch (err) {
      if (err instanceof StatementParseError) {
        const loc = body.file ? ['body', 'file', err.where] : ['body', ...jsonPath(err.where)];
        throw new ValidationError([{ loc, msg: `${err.where}: ${err.problem}`, type: 'statement_invalid' }], `The ${format!} statement is malformed at ${err.where}: ${err.problem}`);
      }
      throw err;
    }
    refuseNul(body.file ? content! : null, parsed!, options);
    return uploadStatement(deps, { organizationId: who.organizationId, uploadedBy: who.uploadedBy, format: format!, fileName, content, options, parsed: parsed! });
}
