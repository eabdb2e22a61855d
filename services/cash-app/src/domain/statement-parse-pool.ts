/**
 * The threads that parse statement uploads (parsers/statement-worker.ts), one bounded kernel worker
 * pool per process: a 38 MB file is seconds of CPU, which on the event loop would stall every other
 * request of the service. At most STATEMENT_PARSE_THREADS parses run and STATEMENT_PARSE_QUEUE wait;
 * another upload is refused at once with 503 and Retry-After, before anything is stored.
 */
import { defaultWorkerThreads, ValidationError, WorkerPool, WorkerTaskFailedError, WorkerTaskTimeoutError } from '@rp/platform';
import type { CashAppConfig } from '../config.js';
import type { ParseUploadInput, ParseUploadResult, StatementWorkerOps } from '../parsers/statement-worker.js';

const ENTRY = new URL(`../parsers/statement-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/** A parse using more CPU time than this (a pathological file; a 50 MB file takes seconds) is stopped and the file refused (422). */
const PARSE_TIMEOUT_MS = 120_000;
/** A parse the busy machine leaves without CPU for this long is stopped: 503 + Retry-After, nothing stored. */
const PARSE_WALL_TIMEOUT_MS = 300_000;
/** What a refused upload is told to wait: about one large parse. */
const RETRY_AFTER_SECONDS = 5;

let pool: WorkerPool<StatementWorkerOps> | null = null;

/** The process's statement-parse pool, created on first use with the service's configuration. */
export function statementParsePool(config: Pick<CashAppConfig, 'STATEMENT_PARSE_THREADS' | 'STATEMENT_PARSE_QUEUE'>): WorkerPool<StatementWorkerOps> {
  pool ??= new WorkerPool<StatementWorkerOps>({
    name: 'Statement parsing',
    entry: ENTRY,
    threads: config.STATEMENT_PARSE_THREADS || defaultWorkerThreads(),
    maxQueue: config.STATEMENT_PARSE_QUEUE,
    retryAfterSeconds: RETRY_AFTER_SECONDS,
    // a 50 MB file's parse (its text, the XML tree of a batch and the statements) fits with room to spare
    maxHeapMb: 1024,
    // threads load the parsers when the service starts (see module.ts), not in the first upload's time
    prestart: true,
    // the lowest scheduling priority: a parse yields the CPU to every request of the machine, and its
    // time limit counts the thread's own CPU time (below), so yielding never fails a valid file
    nice: 19,
  });
  return pool;
}

/**
 * Parses an upload on a thread. `input.bytes` lives in shared memory (see statement-intake.ts), so
 * the file is not copied to the thread. Throws the 422 of a malformed file, or WorkerPoolBusyError
 * (503 + Retry-After) when every thread is busy and the queue is full.
 */
export async function parseOnThread(config: Pick<CashAppConfig, 'STATEMENT_PARSE_THREADS' | 'STATEMENT_PARSE_QUEUE'>, input: ParseUploadInput): Promise<ParseUploadResult> {
  try {
    return await statementParsePool(config).run('parseUpload', [input], { timeoutMs: PARSE_TIMEOUT_MS, clock: 'thread-cpu', wallTimeoutMs: PARSE_WALL_TIMEOUT_MS });
  } catch (err) {
    // A file the parser cannot finish within its time or memory is the file's problem, not the service's.
    if (err instanceof WorkerTaskTimeoutError || err instanceof WorkerTaskFailedError) {
      const why = err instanceof WorkerTaskTimeoutError ? `within ${PARSE_TIMEOUT_MS / 1000} s` : 'within the memory a parse may use';
      const msg = `the file could not be read ${why}`;
      throw new ValidationError([{ loc: ['body', 'file'], msg, type: 'statement_invalid' }], `The statement ${msg}.`);
    }
    throw err;
  }
}

/** Stops the threads (a process shutting down, tests). */
export async function closeStatementParsePool(): Promise<void> {
  const p = pool;
  pool = null;
  await p?.close();
}
