/**
 * A template-pool worker thread (see template-pool.ts): renders one Liquid template per message with
 * the kernel's bounded engine, keeping the parsed form of recently used saved templates.
 */
import { parentPort } from 'node:worker_threads';
import type { Template } from 'liquidjs';
import { createTemplateEngine, liquidErrorPosition } from './email-templates.js';
import { ParsedTemplateCache } from './parsed-templates.js';
import type { TemplateJobMessage, TemplateJobReply } from './template-pool.js';

const engine = createTemplateEngine();

/** Parsed saved templates of this thread, reused while their modified_at and source are unchanged. */
const parsed = new ParsedTemplateCache(500, 4_000_000, (source) => engine.parse(source));

function parse(key: TemplateJobMessage['cacheKey'], source: string): Template[] {
  return key === null ? engine.parse(source) : parsed.get(key.id, key.field, key.modifiedAt, source);
}

const port = parentPort!;
port.on('message', (m: TemplateJobMessage) => {
  let reply: TemplateJobReply;
  try {
    reply = { id: m.id, ok: true, output: engine.renderSync(parse(m.cacheKey, m.source), m.context as object) as string };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    reply = { id: m.id, ok: false, message, position: liquidErrorPosition(err) };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true });
