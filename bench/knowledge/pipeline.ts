/** The `pipeline` section of `npm run bench -- knowledge`: the pure pipeline's stages timed on the generated playbook. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { extractPages } from '../../services/knowledge/src/extraction/parse.js';
import { splitMemories } from '../../services/knowledge/src/extraction/memories.js';
import { dedupeMemories } from '../../services/knowledge/src/extraction/dedup.js';
import { enrichMemories } from '../../services/knowledge/src/extraction/enrich.js';
import { synthesizeProposals } from '../../services/knowledge/src/extraction/synthesize.js';
import type { DedupCandidate } from '../../services/knowledge/src/extraction/types.js';
import { FIXTURES_DIR, generatedPlaybookPdf } from '../knowledge-fixtures.js';
import { type Context, type LabelFile, PAGES } from './inputs.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);

async function timed<T>(fn: () => Promise<T> | T): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: Math.round((performance.now() - t0) * 10) / 10 };
}

/** The pure pipeline on a generated PAGES-page playbook, each stage timed; best of RUNS. */
export async function timePipeline(): Promise<Record<string, unknown>> {
  const ctx = JSON.parse(readFileSync(path.join(FIXTURES_DIR, 'context.json'), 'utf8')) as Context;
  const pdf = await generatedPlaybookPdf(PAGES);
  const existing: DedupCandidate[] = [];
  for (const file of ctx.order) {
    const label = JSON.parse(readFileSync(path.join(FIXTURES_DIR, `${file}.labels.json`), 'utf8')) as LabelFile;
    const pages = await extractPages(new Uint8Array(readFileSync(path.join(FIXTURES_DIR, file))), label.mime);
    for (const d of splitMemories(pages)) existing.push({ id: d.key, kind: 'memory', text: d.text });
  }
  const runs: Record<string, number>[] = [];
  let counts: Record<string, number> = {};
  for (let r = 0; r < RUNS; r++) {
    const parse = await timed(() => extractPages(pdf, 'application/pdf'));
    const split = await timed(() => splitMemories(parse.value));
    const dedup = await timed(() => dedupeMemories(split.value, existing));
    const enrich = await timed(() => enrichMemories(dedup.value.kept, { partners: ctx.partners, segments: ctx.segments, collection: null }));
    const synth = await timed(() => synthesizeProposals(enrich.value.map((m, i) => ({ ...m, id: `m${i + 1}` })), []));
    runs.push({ parse_ms: parse.ms, split_ms: split.ms, dedup_ms: dedup.ms, enrich_ms: enrich.ms, synthesize_ms: synth.ms, total_ms: Math.round((parse.ms + split.ms + dedup.ms + enrich.ms + synth.ms) * 10) / 10 });
    counts = { pages: parse.value.length, memories: split.value.length, removed_as_duplicates: dedup.value.removed.length, kept: dedup.value.kept.length, linked_to_customers: enrich.value.filter((m) => m.customer_id).length, proposals: synth.value.length };
  }
  const best = runs.reduce((a, b) => (b.total_ms! < a.total_ms! ? b : a));
  return { pdf_bytes: pdf.byteLength, runs: RUNS, counts, best, all_runs: runs };
}
