/**
 * The report pool's worker module (see report-files.ts), run on the kernel's worker threads: writes a
 * report's XLSX and CSV from row batches that arrive over a MessagePort: it says when it starts (the
 * sender reads no row before), and acknowledges each batch once written so that the sender stays at
 * most two batches ahead.
 */
import type { MessagePort } from 'node:worker_threads';
import { writeReportFilesHere, type ReportCell, type ReportFilesLayout, type ReportRowsMessage } from './report-files.js';

export const ops = {
  async write(layout: ReportFilesLayout, port: MessagePort): Promise<number[]> {
    const inbox: ReportRowsMessage[] = [];
    let wake: (() => void) | null = null;
    port.on('message', (m: ReportRowsMessage) => {
      inbox.push(m);
      wake?.();
    });
    const next = async (): Promise<ReportRowsMessage> => {
      while (inbox.length === 0) await new Promise<void>((r) => (wake = r));
      wake = null;
      return inbox.shift()!;
    };
    // the sheets are written in order and their rows are sent in order: one inbox serves them all
    async function* rowsOf(sheet: number): AsyncIterable<readonly ReportCell[]> {
      for (;;) {
        const m = await next();
        if (m.sheet !== sheet) throw new Error(`report rows for sheet ${m.sheet} while writing sheet ${sheet}`);
        if ('end' in m) {
          port.postMessage('ack');
          return;
        }
        yield* m.rows;
        port.postMessage('ack');
      }
    }
    port.postMessage('started');
    try {
      return await writeReportFilesHere(layout, rowsOf);
    } finally {
      port.close();
    }
  },
};
