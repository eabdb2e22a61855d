import { parseBai2Steps } from './bai2.js';
import { parseCamt053Steps, parseCamt054Steps } from './camt053.js';
import { csvMappingSchema, parseCsvSteps } from './csv.js';
import { parseJsonStatementFileSteps } from './json.js';
import { parseMt940Steps } from './mt940.js';
import { runParse, StatementParseError, type ParsedFile, type ParseSteps, type StatementFormat } from './types.js';

export * from './types.js';
export { csvMappingSchema, type CsvMapping } from './csv.js';
export { jsonStatementSchema, jsonStatementShape, fromJsonStatement, type JsonStatement } from './json.js';

/**
 * Parse a statement file in `format` into its statements (in file order). `options` is what was
 * stored with the statement (the CSV column mapping). Throws StatementParseError naming the line or
 * element of the first problem.
 */
export function parseStatement(format: StatementFormat, content: Buffer, options: Record<string, unknown> = {}): ParsedFile {
  return runParse(parseStatementSteps(format, content, options));
}

/**
 * parseStatement as ParseSteps: the parser yields between batches of lines; drive it with
 * runParseAsync to heartbeat and let the event loop run while a large file is read.
 */
export function parseStatementSteps(format: StatementFormat, content: Buffer, options: Record<string, unknown> = {}): ParseSteps {
  switch (format) {
    case 'camt053':
      return parseCamt053Steps(content);
    case 'camt054':
      return parseCamt054Steps(content);
    case 'bai2':
      return parseBai2Steps(content);
    case 'mt940':
      return parseMt940Steps(content);
    case 'csv': {
      const mapping = csvMappingSchema.safeParse(options.mapping);
      if (!mapping.success) throw new StatementParseError('mapping', mapping.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      return parseCsvSteps(content, mapping.data);
    }
    case 'json':
      return parseJsonStatementFileSteps(content);
  }
}
export { detectStatementFormat, type Detection } from './detect.js';
