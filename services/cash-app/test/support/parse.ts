/** Parser test helpers: a file's only statement, and the StatementParseError a bad file raises. */
import { expect } from 'vitest';
import { parseStatement, StatementParseError, type ParsedStatement, type StatementFormat } from '../../src/parsers/index.js';

/** The file's only statement (these files hold one). */
export function parseOne(format: StatementFormat, content: Buffer | string, options: Record<string, unknown> = {}): ParsedStatement {
  const { statements } = parseStatement(format, Buffer.from(content), options);
  expect(statements).toHaveLength(1);
  return statements[0]!;
}

/** The StatementParseError parsing `content` raises (any other error is rethrown; no error fails). */
export function parseError(format: StatementFormat, content: string | Buffer, options: Record<string, unknown> = {}): StatementParseError {
  try {
    parseStatement(format, Buffer.from(content), options);
  } catch (err) {
    if (err instanceof StatementParseError) return err;
    throw err;
  }
  throw new Error('expected a StatementParseError');
}
