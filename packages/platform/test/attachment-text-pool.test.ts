/**
 * Attachments read on the kernel's attachment threads (attachment-text-pool.ts): the same answer as
 * reading them on the calling thread, and a full pool refuses with 503 and Retry-After. The inbox's
 * parse stage reading through it is covered by test/inbox-parse.test.ts and test/inbox-remittance.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { attachmentText } from '../src/attachment-text.js';
import { attachmentTextOffLoop, createAttachmentTextPool, type AttachmentTextPool } from '../src/attachment-text-pool.js';
import { WorkerPoolBusyError } from '../src/worker-pool.js';

let pool: AttachmentTextPool | null = null;
afterEach(async () => {
  await pool?.close();
  pool = null;
});

async function pdf(lines: string[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage();
  lines.forEach((l, i) => page.drawText(l, { x: 50, y: 750 - i * 20, size: 12, font }));
  return doc.save();
}

describe('attachment text pool', () => {
  it('reads a PDF and a CSV on a thread exactly as on the calling thread', async () => {
    pool = createAttachmentTextPool({ threads: 1, maxQueue: 2 });
    const csv = new TextEncoder().encode('Invoice;Amount\nINV-1001;120.50\nINV-1002;80.00\n');
    expect(await attachmentTextOffLoop(csv, 'text/csv', 'remittance.csv', undefined, pool)).toEqual(await attachmentText(csv, 'text/csv', 'remittance.csv'));
    const bytes = await pdf(['Remittance advice', 'INV-1001 120.50', 'INV-1002 80.00']);
    const threaded = await attachmentTextOffLoop(bytes, 'application/pdf', 'advice.pdf', undefined, pool);
    expect(threaded).toEqual(await attachmentText(bytes, 'application/pdf', 'advice.pdf'));
    expect(threaded).toMatchObject({ kind: 'pdf', text: expect.stringContaining('INV-1002') });
  });

  it('refuses with 503 and Retry-After when every thread reads and the queue is full', async () => {
    pool = createAttachmentTextPool({ threads: 1, maxQueue: 0 });
    const bytes = await pdf(['one']);
    const running = attachmentTextOffLoop(bytes, 'application/pdf', 'a.pdf', undefined, pool);
    const refused = await attachmentTextOffLoop(bytes, 'application/pdf', 'b.pdf', undefined, pool).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WorkerPoolBusyError);
    expect(refused).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    expect(await running).toMatchObject({ kind: 'pdf', text: expect.stringContaining('one') });
  });
});
