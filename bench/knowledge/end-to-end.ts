/**
 * The `end_to_end` section of `npm run bench -- knowledge`: the generated playbook from upload to
 * `complete` through the gateway, on the real stack (see run.ts).
 */
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { startServiceWorker, type CommonConfig, type RunningWorker, type ServiceModule } from '@rp/platform';
import { workflowsPath } from '@rp/workflows/paths';
import { SERVICE_MODULES } from '../../scripts/local/services.js';
import { startObjectStorage } from '../../scripts/local/object-storage.js';
import { startBenchEnvironment } from '../support/environment.js';
import { onboardBenchOrganization, startApisAndGateway, type BenchApis } from '../support/stack.js';
import { generatedPlaybookPdf } from '../knowledge-fixtures.js';
import { PAGES } from './inputs.js';

const loadAvg = () => Math.round(os.loadavg()[0]! * 100) / 100;
const seconds = (fromIso: string | undefined, toIso: string | undefined) =>
  fromIso && toIso ? Math.round((Date.parse(toIso) - Date.parse(fromIso)) / 100) / 10 : null;

export const END_TO_END_TARGET_S = 60;

/** The parts of the gateway's answers the end-to-end section reads. */
interface FileAnswer {
  id: string;
  is_verified: boolean;
  verification_error: string | null;
  upload_url: string | null;
  upload_headers: Record<string, string> | null;
}
interface JobAnswer {
  id: string;
  status: string;
  error: string | null;
  created_at: string;
  completed_at: string | null;
  input_count: number;
  processed_count: number;
  memory_count: number;
  dedup_count: number;
  knowledge_count: number;
  proposal_count: number;
  progress: Record<string, { done: number; total: number; started_at?: string; completed_at?: string }>;
}

/** The generated PAGES-page PDF from upload to `complete` through the gateway, on the real stack. */
export async function timeEndToEnd(): Promise<Record<string, unknown>> {
  const log = (m: string) => process.stderr.write(`[knowledge/end_to_end] ${m}\n`);
  const pdf = Buffer.from(await generatedPlaybookPdf(PAGES));
  const env = await startBenchEnvironment('knowledge');
  const s3Dir = path.resolve('var', 'bench', `knowledge-s3-${process.pid}`);
  const s3 = await startObjectStorage({ dataDir: s3Dir, accessKeyId: `bench-${randomBytes(6).toString('hex')}`, secretAccessKey: randomBytes(24).toString('base64url') });
  let stack: BenchApis | undefined;
  let worker: RunningWorker | undefined;
  try {
    const e: Record<string, string> = {
      ...env.env,
      DATABASE_POOL_MAX: '5',
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: 'bench-knowledge',
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      S3_REGION: s3.region,
    };
    stack = await startApisAndGateway(e);
    const entry = SERVICE_MODULES.knowledge;
    log('starting the knowledge worker (bundling the workflows)…');
    worker = await startServiceWorker(entry.module as ServiceModule<CommonConfig, unknown>, entry.config(e), { workflowsPath });
    const org = await onboardBenchOrganization(e, 'Knowledge bench', 'knowledge@example.com');
    const gatewayUrl = stack.gatewayUrl;
    const call = async <T>(method: string, p: string, body?: unknown): Promise<T> => {
      const res = await fetch(gatewayUrl + p, {
        method,
        headers: { authorization: `Bearer ${org.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = (await res.json()) as unknown;
      if (res.status !== 200 && res.status !== 201 && res.status !== 202) throw new Error(`${method} ${p} → ${res.status} ${JSON.stringify(json)}`);
      return json as T;
    };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    const loadBefore = loadAvg();
    log(`uploading ${pdf.byteLength} bytes (${PAGES} pages)…`);
    const t0 = performance.now();
    const created = await call<FileAnswer>('POST', '/v2/aether/files', { name: 'playbook-200.pdf', mime_type: 'application/pdf', size: pdf.byteLength });
    const put = await fetch(created.upload_url!, { method: 'PUT', headers: created.upload_headers ?? {}, body: pdf });
    if (put.status !== 200) throw new Error(`PUT upload_url → ${put.status} ${await put.text()}`);
    const tUploaded = performance.now();
    let file: FileAnswer;
    for (;;) {
      file = await call<FileAnswer>('GET', `/v2/aether/files/${created.id}`);
      if (file.is_verified) break;
      if (file.verification_error) throw new Error(`the upload was not verified: ${file.verification_error}`);
      await sleep(100);
    }
    const tVerified = performance.now();
    const requested = await call<JobAnswer>('POST', '/v2/aether/playbook/extractions', { file_id: file.id });
    const tRequested = performance.now();
    const statuses: { status: string; at_s: number }[] = [];
    let job: JobAnswer;
    for (;;) {
      job = await call<JobAnswer>('GET', `/v2/aether/playbook/extractions/${requested.id}`);
      if (statuses[statuses.length - 1]?.status !== job.status) statuses.push({ status: job.status, at_s: Math.round((performance.now() - t0) / 100) / 10 });
      if (job.status === 'complete' || job.status === 'failed') break;
      if (performance.now() - t0 > 15 * 60_000) throw new Error(`the job did not end in 15 minutes: ${JSON.stringify(job)}`);
      await sleep(100);
    }
    const tEnd = performance.now();
    const total = Math.round((tEnd - t0) / 100) / 10;
    const progress = job.progress ?? {};
    const stages: Record<string, { seconds: number | null; done: number; total: number }> = {};
    for (const st of ['extracting', 'deduping', 'enriching', 'synthesizing']) {
      const pr = progress[st];
      stages[st] = { seconds: seconds(pr?.started_at, pr?.completed_at), done: pr?.done ?? 0, total: pr?.total ?? 0 };
    }
    log(`${job.status} after ${total} s`);
    return {
      pages: PAGES,
      pdf_bytes: pdf.byteLength,
      status: job.status,
      error: job.error,
      upload_to_complete_s: total,
      target_s: END_TO_END_TARGET_S,
      target_met: job.status === 'complete' && total <= END_TO_END_TARGET_S,
      phases_s: {
        create_and_put: Math.round((tUploaded - t0) / 100) / 10,
        verify: Math.round((tVerified - tUploaded) / 100) / 10,
        request_job: Math.round((tRequested - tVerified) / 100) / 10,
        job_to_end: Math.round((tEnd - tRequested) / 100) / 10,
        job_created_to_completed: seconds(job.created_at, job.completed_at ?? undefined),
      },
      counters: {
        input_count: job.input_count,
        processed_count: job.processed_count,
        memory_count: job.memory_count,
        dedup_count: job.dedup_count,
        knowledge_count: job.knowledge_count,
        proposal_count: job.proposal_count,
      },
      stages,
      statuses_seen: statuses,
      load_avg_1m: { before: loadBefore, after: loadAvg() },
    };
  } finally {
    await worker?.close().catch(() => {});
    await stack?.close();
    await s3.stop().catch(() => {});
    rmSync(s3Dir, { recursive: true, force: true });
    await env.stop();
  }
}
