/**
 * Attachments read off the event loop: attachmentText parses a PDF, XLSX or CSV of up to the inbound
 * size limit, seconds of CPU for a large file, and on a worker process's event loop that would stop the
 * heartbeats of every activity it runs for as long (DESIGN §9). A bounded pool of kernel worker threads
 * (worker-pool.ts) reads them instead, one process-wide pool created on first use.
 *
 * The queue is sized for the activities that read attachments one at a time each (a worker's activity
 * slots), so in practice nothing is refused; beyond it WorkerPoolBusyError (503 with Retry-After).
 */
import type { AttachmentText, AttachmentTextLimits } from './attachment-text.js';
import { DEFAULT_ATTACHMENT_TEXT_LIMITS } from './attachment-text.js';
import { defaultWorkerThreads, WorkerPool } from './worker-pool.js';
import type { ops } from './attachment-text-worker.js';

export type AttachmentTextPool = WorkerPool<typeof ops>;

export function createAttachmentTextPool(opts: { threads?: number; maxQueue?: number } = {}): AttachmentTextPool {
  return new WorkerPool<typeof ops>({
    name: 'Attachment reading',
    entry: new URL(`./attachment-text-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
    threads: opts.threads ?? defaultWorkerThreads(),
    maxQueue: opts.maxQueue ?? 256,
    // a PDF's text of its 50 pages and a workbook of 20,000 rows fit well within this
    maxHeapMb: 512,
  });
}

let shared: AttachmentTextPool | null = null;

/** The process's attachment-reading threads. */
export function sharedAttachmentTextPool(): AttachmentTextPool {
  shared ??= createAttachmentTextPool();
  return shared;
}

/** attachmentText on a worker thread (the bytes are copied to it; the caller keeps them). */
export function attachmentTextOffLoop(
  bytes: Uint8Array,
  mimeType: string,
  name: string | null,
  limits: AttachmentTextLimits = DEFAULT_ATTACHMENT_TEXT_LIMITS,
  pool: AttachmentTextPool = sharedAttachmentTextPool(),
): Promise<AttachmentText> {
  return pool.run('read', [bytes, mimeType, name, limits]);
}
