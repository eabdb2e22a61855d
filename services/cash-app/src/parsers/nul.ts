/**
 * The kernel's no-NUL rule (U+0000, which PostgreSQL refuses in text and jsonb) for what the kernel
 * cannot see: the bytes of an uploaded statement file (binary to the kernel) and what parsing
 * produces from it or from the JSON text of a CSV `mapping` (an escaped `\u0000` is not a NUL until
 * parsed). A statement file is text, so a NUL byte anywhere in it is refused with its line.
 */
import { findNul, NUL_ISSUE_TYPE, NUL_MESSAGE, ValidationError, type ValidationIssue } from '@rp/platform';
import type { ParsedFile } from './types.js';

const pathText = (path: (string | number)[]) => path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('').replace(/^\./, '');

/** Throws 422 `request-validation` when the file, the options (mapping) or the parsed statements carry a NUL. */
export function refuseNul(file: Buffer | null, parsed: ParsedFile, options: Record<string, unknown>): void {
  const issues: ValidationIssue[] = [];
  const at = file ? file.indexOf(0) : -1;
  if (file && at >= 0) {
    let line = 1;
    for (let i = file.indexOf(10); i !== -1 && i < at; i = file.indexOf(10, i + 1)) line++;
    issues.push({ loc: ['body', 'file', `line ${line}`], msg: `line ${line}: ${NUL_MESSAGE}`, type: NUL_ISSUE_TYPE });
  }
  for (const f of findNul(options)) issues.push({ loc: ['body', ...f.path], msg: NUL_MESSAGE, type: NUL_ISSUE_TYPE });
  if (issues.length === 0) {
    for (const f of findNul(parsed)) {
      const path = f.path[0] === 'statements' && parsed.statements.length === 1 ? f.path.slice(2) : f.path;
      issues.push({ loc: file ? ['body', 'file'] : ['body'], msg: `the statement's ${pathText(path)} ${NUL_MESSAGE}`, type: NUL_ISSUE_TYPE });
    }
  }
  if (issues.length) throw new ValidationError(issues, `The statement ${issues[0]!.msg}.`);
}
