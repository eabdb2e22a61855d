import type { Template } from 'liquidjs';
import { createTemplateEngine } from './email-templates.js';

/**
 * Parsed saved templates, per template-pool thread (template-worker.ts): a bounded LRU keyed by
 * (template id, field) whose entry holds the template's `modified_at` and source. An entry is used
 * only when both equal the row just read, so a PATCHed template renders its new text at once (every
 * save sets modified_at; the source comparison also covers two saves within the same microsecond).
 * Bounded by entry count and by total source characters (a template may be up to 100,000).
 */
export class ParsedTemplateCache {
  private readonly entries = new Map<string, { modifiedAt: number; source: string; parsed: Template[] }>();
  private chars = 0;

  constructor(
    private readonly maxEntries = 2_000,
    private readonly maxChars = 8_000_000,
    private readonly parse: (source: string) => Template[] = parserOfDefaultEngine(),
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The parsed template of `source`, saved as template `id`'s `field` at `modifiedAt`. */
  get(id: string, field: string, modifiedAt: Date | number, source: string): Template[] {
    const key = `${id} ${field}`;
    const at = typeof modifiedAt === 'number' ? modifiedAt : modifiedAt.getTime();
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.chars -= hit.source.length;
      if (hit.modifiedAt === at && hit.source === source) {
        this.entries.set(key, hit); // most recently used last
        this.chars += hit.source.length;
        return hit.parsed;
      }
    }
    const parsed = this.parse(source);
    this.entries.set(key, { modifiedAt: at, source, parsed });
    this.chars += source.length;
    for (const [k, e] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.chars <= this.maxChars) break;
      this.entries.delete(k);
      this.chars -= e.source.length;
    }
    return parsed;
  }
}

function parserOfDefaultEngine(): (source: string) => Template[] {
  const engine = createTemplateEngine();
  return (source) => engine.parse(source);
}
