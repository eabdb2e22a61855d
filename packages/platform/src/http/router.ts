/**
 * The service kit's router: deterministic dispatch of OpenAPI-style path templates.
 *
 * A request path is matched against every declared template of the same number of segments; of the
 * templates that match, the MOST SPECIFIC one wins: comparing segment by segment from the left, a
 * fixed segment beats a `{capture}` (`/v2/adjustments/ledger-accounts` beats
 * `/v2/adjustments/{adjustment_id}`, whatever the order of declaration). The request is then
 * served by that template's handler for the method, or answered 405 with `Allow` listing exactly the
 * methods declared on that template: a less specific template never serves a path a more specific
 * one declares, and never shows up in its `Allow`. HEAD is served by GET. A trailing slash is
 * ignored. Captures are percent-decoded (a malformed escape is passed on as sent).
 */
import type { HttpMethod } from './route.js';

export interface RouteMatch<H> {
  /** the winning template, e.g. `/v2/users/{user_id}` */
  template: string;
  /** its handler for the method, or undefined (405) */
  handler: H | undefined;
  params: Record<string, string>;
  /** the same captures as sent, before percent-decoding (for the input rules on escapes) */
  rawParams: Record<string, string>;
  /** methods declared on the template, upper case, in declaration order */
  allowed: string[];
}

interface Template<H> {
  template: string;
  /** fixed segment text, or null for a capture */
  segments: (string | null)[];
  names: string[];
  handlers: Map<string, H>;
  allowed: string[];
}

const shapeOf = (segments: (string | null)[]) => segments.map((s) => (s === null ? '{}' : s)).join('/');

/** Negative when `a` is more specific than `b`: the first segment where one is fixed and the other a capture decides. */
export function compareSpecificity(a: (string | null)[], b: (string | null)[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const fa = a[i] !== null;
    const fb = b[i] !== null;
    if (fa !== fb) return fa ? -1 : 1;
  }
  return 0;
}

export function splitTemplate(template: string): { segments: (string | null)[]; names: string[] } {
  const names: string[] = [];
  const segments = template
    .split('/')
    .slice(1)
    .map((s) => {
      const m = /^\{([^}]+)\}$/.exec(s);
      if (!m) {
        if (s.includes('{')) throw new Error(`Route ${template}: a capture must be a whole path segment`);
        return s;
      }
      names.push(m[1]!);
      return null;
    });
  return { segments, names };
}

function decode(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export class PathRouter<H> {
  /** templates by segment count, most specific first */
  private readonly bySize = new Map<number, Template<H>[]>();
  private readonly byShape = new Map<string, Template<H>>();

  add(method: HttpMethod, template: string, handler: H): void {
    if (!template.startsWith('/')) throw new Error(`Route ${template}: paths start with /`);
    const { segments, names } = splitTemplate(template);
    const shape = shapeOf(segments);
    let t = this.byShape.get(shape);
    if (!t) {
      t = { template, segments, names, handlers: new Map(), allowed: [] };
      this.byShape.set(shape, t);
      const list = this.bySize.get(segments.length) ?? [];
      list.push(t);
      list.sort((a, b) => compareSpecificity(a.segments, b.segments));
      this.bySize.set(segments.length, list);
    } else if (t.names.join('/') !== names.join('/')) {
      throw new Error(`Routes ${t.template} and ${template} differ only in capture names`);
    }
    const m = method.toUpperCase();
    if (t.handlers.has(m)) throw new Error(`Route ${m} ${template} is declared twice`);
    t.handlers.set(m, handler);
    t.allowed.push(m);
  }

  /** The most specific template matching `path`, or null (no template: 404). */
  match(method: string, path: string): RouteMatch<H> | null {
    const parts = path.split('/');
    parts.shift(); // leading ''
    if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop(); // trailing slash
    const candidates = this.bySize.get(parts.length);
    if (!candidates) return null;
    for (const t of candidates) {
      let ok = true;
      for (let i = 0; i < parts.length; i++) {
        const fixed = t.segments[i];
        if (fixed === null ? parts[i] === '' : fixed !== parts[i]) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      const params: Record<string, string> = {};
      const rawParams: Record<string, string> = {};
      let n = 0;
      for (let i = 0; i < parts.length; i++) {
        if (t.segments[i] !== null) continue;
        const name = t.names[n++]!;
        rawParams[name] = parts[i]!;
        params[name] = decode(parts[i]!);
      }
      const m = method.toUpperCase();
      const handler = t.handlers.get(m) ?? (m === 'HEAD' ? t.handlers.get('GET') : undefined);
      return { template: t.template, handler, params, rawParams, allowed: t.allowed };
    }
    return null;
  }
}
