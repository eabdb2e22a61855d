/**
 * Optional language-model refinement of the extraction pipeline. Only when LLM_BASE_URL is set (an
 * OpenAI-compatible chat-completions endpoint; LLM_API_KEY, default "none"; LLM_MODEL, default
 * "gpt-4o-mini"); the offline pipeline stays the default and is what tests and benchmarks measure.
 *
 * The model's answers are never trusted blindly: a split is accepted only as excerpts that occur
 * verbatim in the page (so the excerpt/offset contract holds), and a title or description only when it
 * is a substring of the proposal's sources (extractive). Anything else — a failed call, malformed
 * JSON, an invented phrase — falls back to the offline result.
 */
import OpenAI from 'openai';
import { normaliseText, sha256 } from './text.js';
import { KNOWLEDGE_TYPES, type KnowledgeType, type MemoryDraft, type ProposalDraft, type SourcePage } from './types.js';

export interface LlmConfig {
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
}

export function llmConfigFromEnv(env: NodeJS.ProcessEnv = process.env): LlmConfig | null {
  if (!env.LLM_BASE_URL) return null;
  return { baseUrl: env.LLM_BASE_URL, apiKey: env.LLM_API_KEY || 'none', model: env.LLM_MODEL || 'gpt-4o-mini', timeoutMs: Number(env.LLM_TIMEOUT_MS ?? 60_000) };
}

export class LlmRefiner {
  private readonly client: OpenAI;

  constructor(private readonly config: LlmConfig) {
    this.client = new OpenAI({ baseURL: config.baseUrl, apiKey: config.apiKey, timeout: config.timeoutMs, maxRetries: 1 });
  }

  private async json(system: string, user: string): Promise<unknown> {
    const res = await this.client.chat.completions.create({
      model: this.config.model,
      temperature: 0,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
    });
    const content = res.choices[0]?.message?.content;
    if (!content) throw new Error('empty completion');
    return JSON.parse(content) as unknown;
  }

  /**
   * Splits each page with the model: it returns {"memories":[{"excerpt","knowledge_type"}]}; excerpts
   * are located in the page text in order. A page whose answer fails or holds an excerpt not found
   * verbatim keeps the offline drafts of that page.
   */
  async refineSplit(pages: SourcePage[], offline: MemoryDraft[]): Promise<MemoryDraft[]> {
    const out: MemoryDraft[] = [];
    for (const p of pages) {
      const fallback = offline.filter((d) => d.page === p.page);
      try {
        const answer = (await this.json(
          'Split the document page into knowledge memories: one fact, rule or procedure each (a list of steps stays one memory). ' +
            'Answer JSON {"memories":[{"excerpt":string,"knowledge_type":"declarative"|"document"|"procedural"}]} where each excerpt is copied verbatim from the page.',
          p.text,
        )) as { memories?: { excerpt?: unknown; knowledge_type?: unknown }[] };
        const list = Array.isArray(answer.memories) ? answer.memories : null;
        if (!list) throw new Error('no memories array');
        const drafts: MemoryDraft[] = [];
        let from = 0;
        for (const m of list) {
          if (typeof m.excerpt !== 'string' || !KNOWLEDGE_TYPES.includes(m.knowledge_type as KnowledgeType)) throw new Error('malformed memory');
          const excerpt = m.excerpt.trim();
          const start = p.text.indexOf(excerpt, from);
          if (!excerpt || start < 0) throw new Error('excerpt not verbatim');
          const end = start + excerpt.length;
          from = end;
          const text = excerpt.replace(/\s+/g, ' ');
          const norm = normaliseText(text);
          drafts.push({ key: sha256(`${p.page}:${start}:${norm}`), text, excerpt, page: p.page, start, end, knowledge_type: m.knowledge_type as KnowledgeType, text_hash: sha256(norm) });
        }
        out.push(...drafts);
      } catch {
        out.push(...fallback);
      }
    }
    return out;
  }

  /** Asks for a better title and description per proposal; kept only when extractive (found in the sources, case-insensitive). */
  async refineTitles(proposals: ProposalDraft[]): Promise<ProposalDraft[]> {
    const out: ProposalDraft[] = [];
    for (const p of proposals) {
      try {
        const sources = p.source_excerpts.map((s) => s.text).join('\n');
        const answer = (await this.json(
          'Give a short title (a key phrase) and a one-sentence description for this knowledge item, both copied verbatim from the text. Answer JSON {"title":string,"description":string}.',
          sources,
        )) as { title?: unknown; description?: unknown };
        const hay = sources.replace(/\s+/g, ' ').toLowerCase();
        const ok = (v: unknown): v is string => typeof v === 'string' && v.trim().length > 0 && hay.includes(v.trim().replace(/\s+/g, ' ').toLowerCase());
        out.push({ ...p, title: ok(answer.title) ? answer.title.trim() : p.title, description: ok(answer.description) ? answer.description.trim() : p.description });
      } catch {
        out.push(p);
      }
    }
    return out;
  }
}

/** The refiner when LLM_BASE_URL is set, else null (offline pipeline only). */
export function llmRefinerFromEnv(env: NodeJS.ProcessEnv = process.env): LlmRefiner | null {
  const config = llmConfigFromEnv(env);
  return config ? new LlmRefiner(config) : null;
}
