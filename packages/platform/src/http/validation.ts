import type { z } from 'zod';
import { ValidationError, type ValidationIssue } from '../errors.js';

export type RequestLocation = 'path' | 'query' | 'body';

export function issuesFrom(location: RequestLocation, error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({
    loc: [location, ...issue.path.map((p) => (typeof p === 'number' ? p : String(p)))],
    msg: issue.message,
    type: issue.code,
  }));
}

/** Validate one part of a request; collects issues instead of throwing so all parts report together. */
export function check<S extends z.ZodType>(
  location: RequestLocation,
  schema: S | undefined,
  value: unknown,
  issues: ValidationIssue[],
): z.output<S> | undefined {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  issues.push(...issuesFrom(location, result.error));
  return undefined;
}

export function throwIfIssues(issues: ValidationIssue[]): void {
  if (issues.length) throw new ValidationError(issues);
}
