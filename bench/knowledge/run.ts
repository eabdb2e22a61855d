/**
 * `npm run bench -- knowledge` (results: bench/results/knowledge.json).
 *
 * Sections (each a function returning its part of the result, in a file of its own beside this one:
 * quality.ts, pipeline.ts, end-to-end.ts; add new ones to SECTIONS):
 *   quality   the offline pipeline on the hand-labelled evaluation set of test/fixtures/knowledge/
 *             (six documents, one per format; labels in <file>.labels.json, partners and segments in
 *             context.json). The documents go through parse → split → dedup → enrich in the order of
 *             context.json, each deduplicated against the memories kept from the ones before (as a
 *             collection fills up). Reported:
 *               - items: a kept memory matches a labelled item when their word-set Jaccard is
 *                 ≥ ITEM_MATCH (one-to-one, best pairs first); precision = matched memories / kept
 *                 memories, recall = matched items / labelled items. Targets recall ≥ 0.8, precision ≥ 0.7.
 *               - duplicate pairs: each removed memory with what it duplicates, mapped to labelled
 *                 items; precision = removals whose pair is labelled / removals, recall = labelled
 *                 pairs found / labelled pairs. Targets precision 1.0, recall ≥ 0.9.
 *               - customer links: over kept memories matched to a labelled item, precision = links equal
 *                 to the item's label / links made, recall = links found / labelled links of those
 *                 memories. Target precision 1.0. Links on memories that are no labelled item (already
 *                 counted against item precision) are listed under on_unlabelled_memories.
 *               - knowledge-type accuracy over matched memories, and the proposals synthesised.
 *   pipeline  the pure pipeline's time on a generated 200-page PDF playbook (bench/knowledge-fixtures.ts):
 *             parse, split, dedup (against the evaluation set's memories), enrich, synthesise, each
 *             timed, best of RUNS runs.
 *   end_to_end the same generated PAGES-page PDF through the real stack (bench/support/environment.ts:
 *             embedded Postgres + Temporal dev server; versitygw as S3; every service API, the gateway,
 *             the knowledge worker): POST /v2/aether/files, PUT the bytes to the presigned upload_url
 *             with its upload_headers, GET the file until verified, POST /v2/aether/playbook/extractions,
 *             poll GET …/extractions/{id} every 100 ms until complete or failed. Reported: upload-to-complete
 *             seconds (from the POST /files to the first poll that sees `complete`; target ≤ 60 s), the
 *             job's counters, and each stage's duration from the job's `progress` (started_at → completed_at).
 *             One run (the stack is started once; the worker's workflow bundle is built before the clock
 *             starts). The 1-minute load average before and after the run is recorded with it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { timeEndToEnd } from './end-to-end.js';
import { timePipeline } from './pipeline.js';
import { evaluateQuality, type QualityResult } from './quality.js';

const SECTIONS: { name: string; run: () => Promise<unknown> }[] = [
  { name: 'quality', run: evaluateQuality },
  { name: 'pipeline', run: timePipeline },
  { name: 'end_to_end', run: timeEndToEnd },
];

export async function run(): Promise<void> {
  const result: Record<string, unknown> = {
    benchmark: 'knowledge',
    machine: { cpus: os.cpus().length, node: process.version, load_avg_1m: Math.round(os.loadavg()[0]! * 100) / 100 },
  };
  for (const s of SECTIONS) {
    process.stderr.write(`[knowledge] ${s.name}…\n`);
    result[s.name] = await s.run();
  }
  const q = result.quality as QualityResult;
  result.targets = {
    item_recall_ge_0_8: (q.items.recall ?? 0) >= 0.8,
    item_precision_ge_0_7: (q.items.precision ?? 0) >= 0.7,
    duplicate_precision_eq_1: q.duplicates.precision === 1,
    duplicate_recall_ge_0_9: (q.duplicates.recall ?? 0) >= 0.9,
    customer_link_precision_eq_1: q.customer_links.precision === 1,
    upload_to_complete_le_60_s: (result.end_to_end as { target_met: boolean }).target_met,
  };
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/knowledge.json', JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
}
