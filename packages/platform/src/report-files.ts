/**
 * Report files (kernel): a report's rows streamed into an XLSX workbook (`exceljs` streaming
 * WorkbookWriter) and a CSV (`csv-stringify`) in a temporary directory, then uploaded to object
 * storage (ObjectStorage.putFile, streamed from disk). Rows arrive as async iterables, so a report of
 * any length never sits in memory: the process holds one row and the writers' buffers.
 *
 * Cells are typed by their column:
 * - `text`: neutralised against spreadsheet formula injection (OWASP "CSV injection"): a value that
 *   starts with `=`, `+`, `-`, `@`, a tab, a carriage return or a line feed gets a leading single quote
 *   (`'=HYPERLINK(…)`), in the CSV and in the XLSX alike (in the XLSX it is a string cell either way;
 *   the quote keeps it inert when a user edits and re-enters the cell).
 * - `amount`: integer minor units (bigint or a safe integer) with 2 decimals. XLSX: a number cell
 *   (format `#,##0.00`), negatives included: a number is never a formula. CSV: the exact decimal
 *   literal `-1234.50` (no thousands separator, `.` decimal point), NOT prefixed: the writer only ever
 *   emits `-?\d+\.\d\d` for an amount, which spreadsheets read as a number and cannot evaluate as a
 *   formula, so negative amounts stay usable numbers. Only text columns carry tenant-controlled text.
 * - `decimal`: an exact decimal literal (`-12.3450`, e.g. a NUMERIC amount in a document currency):
 *   XLSX a number cell, CSV the literal as given (validated `-?\d+(\.\d+)?`, so never a formula).
 * - `integer`: a number (CSV: its decimal digits).
 * - `date`: a `YYYY-MM-DD` string (text in both files; validated, so it cannot carry a formula).
 *
 * The CSV holds the first sheet only (one table, with a header line); the XLSX holds every sheet.
 * Object keys are `${objectPrefix}/${filename}`: a retried build writes the same keys again.
 *
 * The files are written on a worker thread (the kernel's WorkerPool, report-files-worker.ts): building
 * a workbook of a million rows is minutes of CPU, and on the activity's event loop it would stop its
 * heartbeats (and every other activity of the worker process) for as long (DESIGN §9). The rows are
 * read here, in the calling thread (they come from its database connections), and sent to the thread
 * in batches over a MessagePort, at most two batches ahead of the writer, so memory stays bounded. A
 * full pool fails the build with WorkerPoolBusyError (the activities retry it).
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import ExcelJS from 'exceljs';
import { stringify } from 'csv-stringify';
import { contentDisposition, type ObjectStorage } from './storage.js';
import { defaultWorkerThreads, WorkerPool, type SerializedWorkerError } from './worker-pool.js';
import type { ops as reportFileOps } from './report-files-worker.js';

export const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

export type ReportCellKind = 'text' | 'amount' | 'decimal' | 'integer' | 'date';
export type ReportCell = string | number | bigint | null;

export interface ReportColumn {
  header: string;
  kind: ReportCellKind;
  /** XLSX column width (characters) */
  width?: number;
}

export interface ReportSheet {
  /** worksheet name (at most 31 characters, no `[]:*?/\`) */
  name: string;
  columns: readonly ReportColumn[];
  /** rows in column order; iterated once, lazily (a later sheet may read totals of an earlier one) */
  rows: AsyncIterable<readonly ReportCell[]> | Iterable<readonly ReportCell[]>;
}

export interface ReportFileArtifact {
  filename: string;
  contentType: string;
  objectKey: string;
  size: number;
  sha256: string;
}

export interface WriteReportFilesInput {
  storage: ObjectStorage;
  /** reportObjectPrefix(org, config, run): the objects are `${objectPrefix}/${baseName}.xlsx|.csv` */
  objectPrefix: string;
  /** file name without extension, e.g. `ar-aging-2026-11-23` */
  baseName: string;
  /** the first sheet is also the CSV */
  sheets: readonly ReportSheet[];
  /** workbook properties */
  title?: string;
  created?: Date;
  /** called every `progressEvery` rows (heartbeats) */
  onProgress?: (rows: number) => void;
  progressEvery?: number;
  /** the threads that write the files (default: the process's, sharedReportFilesPool()) */
  pool?: ReportFilesPool;
}

export interface WrittenReportFiles {
  /** the XLSX and the CSV, in that order */
  artifacts: [ReportFileArtifact, ReportFileArtifact];
  /** rows written per sheet (headers not counted) */
  rowCounts: number[];
}

const FORMULA_START = /^[=+\-@\t\r\n]/;

/** A text cell made inert for spreadsheets: a leading `=`, `+`, `-`, `@`, tab, CR or LF gets a `'` in front. */
export function neutralizeFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** Integer minor units → the exact decimal literal with 2 decimals (`-1234.50`). */
export function formatMinorUnits(cents: bigint | number): string {
  const v = typeof cents === 'bigint' ? cents : BigInt(checkedInteger(cents));
  const neg = v < 0n;
  const abs = neg ? -v : v;
  const whole = abs / 100n;
  const frac = (abs % 100n).toString().padStart(2, '0');
  return `${neg ? '-' : ''}${whole}.${frac}`;
}

function checkedInteger(n: number): number {
  if (!Number.isSafeInteger(n)) throw new RangeError(`not a safe integer: ${n}`);
  return n;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

function checkedDecimal(v: ReportCell): string {
  const s = String(v);
  if (!DECIMAL.test(s)) throw new RangeError(`not a decimal: ${s}`);
  return s;
}

function csvCell(kind: ReportCellKind, v: ReportCell): string {
  if (v === null || v === undefined) return '';
  switch (kind) {
    case 'amount':
      return formatMinorUnits(typeof v === 'string' ? BigInt(v) : (v as bigint | number));
    case 'decimal':
      return checkedDecimal(v);
    case 'integer':
      return typeof v === 'bigint' ? v.toString() : String(checkedInteger(Number(v)));
    case 'date':
      if (!DATE.test(String(v))) throw new RangeError(`not a date: ${String(v)}`);
      return String(v);
    case 'text':
      return neutralizeFormula(String(v));
  }
}

function xlsxCell(kind: ReportCellKind, v: ReportCell): string | number | null {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'amount': {
      const cents = typeof v === 'bigint' ? v : BigInt(typeof v === 'string' ? v : checkedInteger(v));
      // A double holds every cent amount up to 2^53 cents exactly enough for its 2-decimal display;
      // beyond that (never in practice) the exact literal as text rather than a rounded number.
      const abs = cents < 0n ? -cents : cents;
      return abs <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(cents) / 100 : formatMinorUnits(cents);
    }
    case 'decimal':
      return Number(checkedDecimal(v));
    case 'integer':
      return typeof v === 'bigint' ? Number(v) : checkedInteger(Number(v));
    case 'date':
      if (!DATE.test(String(v))) throw new RangeError(`not a date: ${String(v)}`);
      return String(v);
    case 'text':
      return neutralizeFormula(String(v));
  }
}

/**
 * One style object per cell kind, shared by every cell of that kind: exceljs caches a style by object
 * identity, so shared objects are serialised once (a per-cell style object — what column styles give —
 * makes the streaming writer about 3× slower).
 */
const CELL_STYLES: Record<ReportCellKind, Partial<ExcelJS.Style>> = {
  text: {},
  date: {},
  amount: { numFmt: '#,##0.00' },
  decimal: { numFmt: '#,##0.00##' },
  integer: { numFmt: '0' },
};

/** Minor units for display (`-1,234.50`): the email's summary table. */
export function displayMinorUnits(cents: bigint | number): string {
  const exact = formatMinorUnits(cents);
  const [whole, frac] = exact.split('.') as [string, string];
  const neg = whole.startsWith('-');
  const digits = neg ? whole.slice(1) : whole;
  return `${neg ? '-' : ''}${digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${frac}`;
}

/** What the writing thread needs of a sheet besides its rows. */
export interface ReportSheetLayout {
  name: string;
  columns: readonly ReportColumn[];
}

/** What the writing thread needs of a report besides its rows. */
export interface ReportFilesLayout {
  dir: string;
  xlsxName: string;
  csvName: string;
  sheets: readonly ReportSheetLayout[];
  title?: string;
  created?: Date;
}

/** Rows of one sheet sent to the writing thread; `end` closes the sheet. The thread says `'started'` once, then answers each message with `'ack'`. */
export type ReportRowsMessage = { sheet: number; rows: (readonly ReportCell[])[] } | { sheet: number; end: true };

/** Rows per message to the writing thread. */
const BATCH_ROWS = 1000;

export type ReportFilesPool = WorkerPool<typeof reportFileOps>;

/** The writer's own errors (a row of the wrong width, a cell of the wrong kind) come back as the RangeError they were. */
function reviveReportError(e: SerializedWorkerError): Error | undefined {
  return e.name === 'RangeError' ? new RangeError(e.message) : undefined;
}

/** A pool of report-writing threads: at most `threads` builds at once, `maxQueue` waiting. */
export function createReportFilesPool(opts: { threads?: number; maxQueue?: number } = {}): ReportFilesPool {
  return new WorkerPool<typeof reportFileOps>({
    name: 'Report build',
    entry: new URL(`./report-files-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
    threads: opts.threads ?? defaultWorkerThreads(),
    // a build's queue entry holds only its layout: its rows wait in the database until it runs
    maxQueue: opts.maxQueue ?? 16,
    retryAfterSeconds: 30,
    maxHeapMb: 512,
    revive: reviveReportError,
  });
}

let sharedPool: ReportFilesPool | null = null;

/** The process's report-writing threads, created on first use. */
export function sharedReportFilesPool(): ReportFilesPool {
  sharedPool ??= createReportFilesPool();
  return sharedPool;
}

export async function closeSharedReportFilesPool(): Promise<void> {
  const pool = sharedPool;
  sharedPool = null;
  await pool?.close();
}

/**
 * Write the sheets into `<baseName>.xlsx` and (first sheet) `<baseName>.csv` on a worker thread, upload
 * both and return their artifacts. The temporary directory is removed whatever happens.
 */
export async function writeReportFiles(input: WriteReportFilesInput): Promise<WrittenReportFiles> {
  if (input.sheets.length === 0) throw new RangeError('a report needs at least one sheet');
  const pool = input.pool ?? sharedReportFilesPool();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'report-'));
  const channel = new MessageChannel();
  const abort = new AbortController();
  try {
    const xlsxName = `${input.baseName}.xlsx`;
    const csvName = `${input.baseName}.csv`;
    const layout: ReportFilesLayout = {
      dir,
      xlsxName,
      csvName,
      sheets: input.sheets.map((sh) => ({ name: sh.name, columns: sh.columns })),
      title: input.title,
      created: input.created,
    };
    const writing = pool.run('write', [layout, channel.port2], { transferList: [channel.port2], signal: abort.signal });
    const rowCounts = await Promise.all([writing, feedRows(channel.port1, input, writing)]).then(
      ([counts]) => counts,
      async (err: unknown) => {
        // reading the rows failed (or the thread did): stop the thread, then report the first failure
        abort.abort(err);
        await writing.catch(() => {});
        throw err;
      },
    );

    const upload = async (filename: string, filePath: string, contentType: string): Promise<ReportFileArtifact> => {
      const objectKey = `${input.objectPrefix}/${filename}`;
      const { size, sha256 } = await input.storage.putFile({ key: objectKey, path: filePath, contentType, contentDisposition: contentDisposition(filename) });
      return { filename, contentType, objectKey, size, sha256 };
    };
    const xlsx = await upload(xlsxName, path.join(dir, xlsxName), XLSX_CONTENT_TYPE);
    const csvArtifact = await upload(csvName, path.join(dir, csvName), CSV_CONTENT_TYPE);
    return { artifacts: [xlsx, csvArtifact], rowCounts };
  } finally {
    channel.port1.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Reads every sheet's rows here and sends them to the writing thread, at most two batches ahead of it.
 * Nothing is read before a thread starts writing (it says `'started'`): a build waiting for a thread,
 * or refused, reads no row.
 */
async function feedRows(port: MessagePort, input: WriteReportFilesInput, writing: Promise<unknown>): Promise<void> {
  let started = false;
  let unacked = 0;
  let wake: (() => void) | null = null;
  port.on('message', (m: 'started' | 'ack') => {
    if (m === 'started') started = true;
    else unacked--;
    wake?.();
  });
  // the writer ending early (an error, a refusal) must not leave this loop waiting for a message that never comes
  let writerDone = false;
  void writing.then(
    () => ((writerDone = true), wake?.()),
    () => ((writerDone = true), wake?.()),
  );
  const until = async (ready: () => boolean) => {
    while (!ready() && !writerDone) await new Promise<void>((r) => (wake = r));
    if (writerDone) throw new Error('the report writer stopped before its rows were sent');
  };
  const send = async (m: ReportRowsMessage) => {
    await until(() => unacked < 2);
    unacked++;
    port.postMessage(m);
  };
  await until(() => started);
  const every = input.progressEvery ?? 5000;
  let total = 0;
  for (const [index, sheet] of input.sheets.entries()) {
    let batch: (readonly ReportCell[])[] = [];
    for await (const row of sheet.rows) {
      batch.push(row);
      total += 1;
      if (input.onProgress && total % every === 0) input.onProgress(total);
      if (batch.length === BATCH_ROWS) {
        await send({ sheet: index, rows: batch });
        batch = [];
      }
    }
    if (batch.length) await send({ sheet: index, rows: batch });
    await send({ sheet: index, end: true });
  }
}

/**
 * The writing itself (on the report thread): rows from `rowsOf(sheet)` into `<dir>/<xlsxName>` and,
 * for the first sheet, `<dir>/<csvName>`. Returns the rows written per sheet.
 */
export async function writeReportFilesHere(layout: ReportFilesLayout, rowsOf: (sheet: number) => AsyncIterable<readonly ReportCell[]>): Promise<number[]> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path.join(layout.dir, layout.xlsxName), useStyles: true, useSharedStrings: false });
  workbook.creator = 'Receivables Platform';
  if (layout.title) workbook.title = layout.title;
  if (layout.created) {
    workbook.created = layout.created;
    workbook.modified = layout.created;
  }

  const csvFile = createWriteStream(path.join(layout.dir, layout.csvName));
  const csv = stringify({ header: true, columns: layout.sheets[0]!.columns.map((c) => c.header), quoted_match: /^'/ });
  csv.pipe(csvFile);
  const csvDone = finished(csvFile);
  // an error of either stream surfaces in csvDone; keep it from becoming unhandled before we await it
  csvDone.catch(() => {});

  const rowCounts: number[] = [];
  try {
    for (const [index, sheet] of layout.sheets.entries()) {
      const ws = workbook.addWorksheet(sheet.name, { views: [{ state: 'frozen', ySplit: 1 }] });
      ws.columns = sheet.columns.map((c, i) => ({ header: c.header, key: `c${i}`, width: c.width ?? (c.kind === 'text' ? 30 : 16) }));
      ws.getRow(1).font = { bold: true };
      ws.getRow(1).commit();
      const styles = sheet.columns.map((c) => CELL_STYLES[c.kind]);
      let count = 0;
      for await (const row of rowsOf(index)) {
        if (row.length !== sheet.columns.length) throw new RangeError(`sheet ${sheet.name}: a row of ${row.length} cells for ${sheet.columns.length} columns`);
        const xrow = ws.addRow(row.map((v, i) => xlsxCell(sheet.columns[i]!.kind, v)));
        xrow.eachCell((cell, n) => {
          cell.style = styles[n - 1]!;
        });
        xrow.commit();
        if (index === 0 && !csv.write(row.map((v, i) => csvCell(sheet.columns[i]!.kind, v)))) await once(csv, 'drain');
        count += 1;
      }
      ws.commit();
      rowCounts.push(count);
    }
    csv.end();
    await Promise.all([workbook.commit(), csvDone]);
  } catch (err) {
    csv.destroy();
    csvFile.destroy();
    throw err;
  }
  return rowCounts;
}
