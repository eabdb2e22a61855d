/**
 * Email templates, read side, and the Liquid engine they render with. The admin service owns email
 * template folders and templates (schema `admin`, migration 005) and publishes one read contract for
 * other services, the view `admin.email_template_defaults` (migration admin 007): per organization
 * and folder, the folder's default template. This module is the only reader of that view outside
 * admin (as coverage.ts is of `admin.coverage_today`); admin may change its tables freely as long as
 * the view keeps its columns.
 *
 * The engine is the one admin validates templates with (liquidjs: no code execution, strict
 * variables and filters, parse/render-time/memory limits, no file system), so a template admin
 * accepted renders the same way wherever it is used.
 */
import type { Knex } from 'knex';
import { Liquid } from 'liquidjs';

export const EMAIL_TEMPLATE_DEFAULTS_VIEW = 'admin.email_template_defaults';

/** Longest template source accepted by the parser (characters). */
export const TEMPLATE_PARSE_LIMIT = 100_000;
/** Render time budget per template (milliseconds). */
export const TEMPLATE_RENDER_LIMIT_MS = 1_000;
/** Memory budget per render (liquidjs counts string and array allocations, in bytes). */
export const TEMPLATE_MEMORY_LIMIT = 16 * 1024 * 1024;

/** The bounded, strict Liquid engine of outreach templates. */
export function createTemplateEngine(): Liquid {
  return new Liquid({
    strictVariables: true,
    strictFilters: true,
    ownPropertyOnly: true,
    parseLimit: TEMPLATE_PARSE_LIMIT,
    renderLimit: TEMPLATE_RENDER_LIMIT_MS,
    memoryLimit: TEMPLATE_MEMORY_LIMIT,
    // No file system: {% include %} / {% render %} / {% layout %} have nothing to read.
    relativeReference: false,
    root: [],
    partials: [],
    layouts: [],
    fs: {
      exists: async () => false,
      existsSync: () => false,
      readFile: async () => {
        throw new Error('templates cannot include files');
      },
      readFileSync: () => {
        throw new Error('templates cannot include files');
      },
      resolve: (_root: string, file: string) => file,
    },
  });
}

export interface DefaultEmailTemplate {
  template_id: string;
  folder_id: string;
  subject: string;
  body: string;
}

/**
 * The organization's default template of the folder named `folderName` (exact name), or null when
 * there is no such folder or it has no default. Folder names are not unique: the oldest folder of
 * that name that has a default wins.
 */
export async function defaultEmailTemplate(db: Knex, organizationId: string, folderName: string): Promise<DefaultEmailTemplate | null> {
  const row = (await db(EMAIL_TEMPLATE_DEFAULTS_VIEW)
    .select('template_id', 'folder_id', 'subject', 'body')
    .where({ organization_id: organizationId, folder_name: folderName })
    .orderBy([{ column: 'folder_created_at' }, { column: 'folder_id' }])
    .first()) as DefaultEmailTemplate | undefined;
  return row ?? null;
}

/** Line and column of a liquidjs error (from its token, else its message). */
export function liquidErrorPosition(err: unknown): { line: number; col: number } | null {
  const e = err as { token?: { getPosition?: () => [number, number] }; message?: string };
  const p = e.token?.getPosition?.();
  if (p) return { line: p[0], col: p[1] };
  const m = /line:(\d+), col:(\d+)/.exec(e.message ?? '');
  return m ? { line: Number(m[1]), col: Number(m[2]) } : null;
}
