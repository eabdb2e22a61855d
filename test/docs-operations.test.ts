/**
 * The domain pages of docs/ list the OpenAPI operations they cover, each linked to the gateway's
 * reference page as `/docs#/<tag>/<operationId>` (Swagger UI's deep link). The link check cannot
 * follow those (they point at a running gateway), so this test holds them to the document the
 * gateway serves, built in-process from the route declarations: every linked operation exists under
 * that tag, and every operation of the document is listed on a page with its method and path.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { platformOpenApi } from '../scripts/client-types.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

function docsPages(): Array<{ file: string; text: string }> {
  const pages: Array<{ file: string; text: string }> = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.md')) pages.push({ file: path.relative(repo, full), text: readFileSync(full, 'utf8') });
    }
  };
  walk(path.join(repo, 'docs'));
  pages.push({ file: 'README.md', text: readFileSync(path.join(repo, 'README.md'), 'utf8') });
  return pages;
}

describe('operations linked from docs/', () => {
  const doc = platformOpenApi() as unknown as { paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>> };
  const operations = new Map<string, { method: string; path: string; tags: string[] }>();
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (HTTP_METHODS.has(method) && op.operationId) operations.set(op.operationId, { method: method.toUpperCase(), path: p, tags: op.tags ?? [] });
    }
  }
  const pages = docsPages();

  it('names an existing operation under its tag in every /docs# link', () => {
    const wrong: string[] = [];
    let links = 0;
    for (const { file, text } of pages) {
      for (const m of text.matchAll(/\/docs#\/([^/\s)]+)\/([A-Za-z0-9_]+)\)/g)) {
        links++;
        const [tag, operationId] = [decodeURIComponent(m[1]!), m[2]!];
        const op = operations.get(operationId);
        if (!op) wrong.push(`${file}: ${operationId} is not an operation of /openapi.json`);
        else if (!op.tags.includes(tag)) wrong.push(`${file}: ${operationId} is tagged ${op.tags.join(', ')}, not ${tag}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(links).toBeGreaterThanOrEqual(operations.size);
  });

  it('lists every operation of /openapi.json on a docs page, with its method and path', () => {
    const all = pages.map((p) => p.text).join('\n');
    const missing: string[] = [];
    for (const [operationId, op] of operations) {
      const row = new RegExp(`\\[\`${operationId}\`\\]\\([^)]*\\) \\| ${op.method} \\| \`${op.path.replace(/[{}]/g, '\\$&')}\` \\|`);
      if (!row.test(all)) missing.push(`${operationId} (${op.method} ${op.path}, tag ${op.tags.join(', ')})`);
    }
    expect(missing, 'add each to the operations table of its domain page in docs/').toEqual([]);
    expect(operations.size).toBeGreaterThan(40);
  });
});
