/**
 * The statement parse of an upload, as the operations of a kernel worker-pool thread (see
 * domain/statement-parse-pool.ts): detecting the format, reading the file in its character
 * encoding, parsing every statement of it, the checks a file cannot fail and be stored, and the
 * no-NUL rule. A 38 MB file takes seconds of CPU; on a thread it stalls no other request.
 *
 * The bytes arrive in shared memory (a SharedArrayBuffer view): nothing is copied to the thread and
 * the request keeps them for hashing and storing. A malformed file is thrown as the 422 the client
 * gets (ValidationError crosses the thread as the same answer).
 */
import { createHash } from 'node:crypto';
import { ValidationError } from '@rp/platform';
import { checkStatements, detectStatementFormat, parseStatement, StatementParseError, storedFile, type ParsedFile, type StatementFormat, type StoredStatement } from './index.js';
import { refuseNul } from './nul.js';

export interface ParseUploadInput {
  /** the file's bytes (shared with the request, never written to) */
  bytes: Uint8Array;
  /** as the client gave it; omitted: detected from the file */
  format?: StatementFormat;
  /** the CSV column mapping and `charset`, as stored with the statement */
  options: Record<string, unknown>;
}

export interface ParseUploadResult {
  format: StatementFormat;
  /** every statement of the file, its lines as the JSON text stored with it (see storedFile) */
  statements: StoredStatement[];
  /** the character encoding the file was read in */
  encoding?: string;
  /** SHA-256 of the bytes (hex): the file's identity for duplicates */
  sha256: string;
}

/**
 * The format of an uploaded file sent without `format` (see detectStatementFormat). With a mapping
 * and no other format recognised it is CSV; otherwise an unrecognised file is a 422 naming what was seen.
 */
export function detectedFormat(content: Buffer, hasMapping: boolean): StatementFormat {
  const d = detectStatementFormat(content);
  if ('format' in d) return d.format;
  if (hasMapping) return 'csv';
  const msg =
    'csv' in d
      ? 'the file looks like CSV, which cannot be read without its column mapping: send `mapping` (format csv)'
      : `the format could not be detected from the file (${d.unknown}): send \`format\` (camt053, camt054, bai2, mt940, csv, json)`;
  throw new ValidationError([{ loc: ['body', 'format'], msg, type: 'format_undetected' }], `Statement format not detected: ${msg}.`);
}

/** Parses and checks an uploaded file and hashes it; throws the 422 naming where the file is malformed. */
export function parseUpload(input: ParseUploadInput): ParseUploadResult {
  const content = Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength);
  const format = input.format ?? detectedFormat(content, input.options.mapping !== undefined);
  let parsed: ParsedFile;
  try {
    parsed = parseStatement(format, content, input.options);
    if (parsed.statements.length === 0) throw new StatementParseError('line 1', 'the file holds no statement');
    checkStatements(parsed);
  } catch (err) {
    if (err instanceof StatementParseError) {
      throw new ValidationError([{ loc: ['body', 'file', err.where], msg: `${err.where}: ${err.problem}`, type: 'statement_invalid' }], `The ${format} statement is malformed at ${err.where}: ${err.problem}`);
    }
    throw err;
  }
  refuseNul(content, parsed, input.options);
  return { format, ...storedFile(parsed), sha256: createHash('sha256').update(content).digest('hex') };
}

export const ops = { parseUpload };
export type StatementWorkerOps = typeof ops;
