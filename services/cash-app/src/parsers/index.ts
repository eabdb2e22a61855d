import { parseBai2 } from './bai2.js';
import { parseCamt053 } from './camt053.js';
import { csvMappingSchema, parseCsv } from './csv.js';
import { parseJsonStatementFile } from './json.js';
import { parseMt940 } from './mt940.js';
import { StatementParseError, type ParsedStatement, type StatementFormat } from './types.js';

export * from './types.js';
export { csvMappingSchema, type CsvMapping } from './csv.js';
export { jsonStatementSchema, jsonStatementShape, fromJsonStatement, type JsonStatement } from './json.js';

/**
 * Parse a statement file in `format`. `options` is what was stored with the statement (the CSV
 * column mapping). Throws StatementParseError naming the line or element of the first problem.
 */
export function parseStatement(format: StatementFormat, content: Buffer, options: Record<string, unknown> = {}): ParsedStatement {
  switch (format) {
    case 'camt053':
      return parseCamt053(content);
    case 'bai2':
      return parseBai2(content);
    case 'mt940':
      return parseMt940(content);
    case 'csv': {
      const mapping = csvMappingSchema.safeParse(options.mapping);
      if (!mapping.success) throw new StatementParseError('mapping', mapping.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      return parseCsv(content, mapping.data);
    }
    case 'json':
      return parseJsonStatementFile(content);
  }
}
