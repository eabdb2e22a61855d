/**
 * Large statement uploads end to end through the gateway: the file is streamed to object storage as
 * it arrives and parsed on the statement-parse threads (a full pool is 503 with Retry-After and stores nothing), a malformed large file is the
 * 422 naming where with nothing stored (no object in storage, no rows, no workflow), a large file of
 * several statements is stored whole, and storing a statement's lines again (a retried activity)
 * stores each line once.
 *
 * The parse pool has one thread and no queue (STATEMENT_PARSE_THREADS=1, STATEMENT_PARSE_QUEUE=0) so
 * one parse fills it: the test occupies it with a parse of a large file on the same process's pool.
 * SQL set-up only in the retry test: it removes stored lines and puts the statement back in
 * `processing`, the state a worker that died mid-way leaves, which no endpoint produces.
 */
import { GetObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, createDb, ObjectStorage, type Db, type TemporalHandle } from '@rp/platform';
import { createBankStatementActivities } from '../services/cash-app/src/activities/bank-statement.js';
import { loadCashAppConfig } from '../services/cash-app/src/config.js';
import { closeStatementParsePool, statementParsePool } from '../services/cash-app/src/domain/statement-parse-pool.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let temporal: TemporalHandle;

/** A camt.053 message of `statements` statements of one account, `lines` entries each, balances in sequence. */
function camt(tag: string, statements: number, lines: number, opts: { badAmountAt?: { statement: number; line: number } } = {}): Buffer {
  const day = '2026-11-02';
  const parts: string[] = [
    `<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><GrpHdr><MsgId>${tag}</MsgId><CreDtTm>${day}T18:00:00</CreDtTm></GrpHdr>`,
  ];
  let balance = 0;
  for (let s = 1; s <= statements; s++) {
    const opening = balance;
    const entries: string[] = [];
    for (let i = 1; i <= lines; i++) {
      const cents = 100 + ((s * 7919 + i * 104729) % 99_900);
      balance += cents;
      const bad = opts.badAmountAt?.statement === s && opts.badAmountAt.line === i;
      entries.push(
        `<Ntry><Amt Ccy="EUR">${bad ? '12.3.4' : (cents / 100).toFixed(2)}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>${day}</Dt></BookgDt>` +
          `<AcctSvcrRef>${tag}-${s}-${i}</AcctSvcrRef><NtryDtls><TxDtls><RltdPties><Dbtr><Nm>Payer ${i}</Nm></Dbtr></RltdPties>` +
          `<RmtInf><Ustrd>Invoice ${tag}-${s}-${i}</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>`,
      );
    }
    const bal = (code: string, cents: number) => `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">${(cents / 100).toFixed(2)}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>${day}</Dt></Dt></Bal>`;
    parts.push(
      `<Stmt><Id>${tag}-S${s}</Id><ElctrncSeqNb>${s}</ElctrncSeqNb><CreDtTm>${day}T18:00:00</CreDtTm><Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy></Acct>` +
        bal('OPBD', opening) + bal('CLBD', balance) + entries.join('\n') + '</Stmt>',
    );
  }
  parts.push('</BkToCstmrStmt></Document>\n');
  return Buffer.from(parts.join('\n'));
}

async function upload(content: Buffer, name = 'statement.xml') {
  const form = new FormData();
  form.set('file', new Blob([content]), name);
  const res = await fetch(`${stack.gatewayUrl}/v2/bank-statements`, { method: 'POST', headers: { authorization: `Bearer ${org.token}` }, body: form });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

function s3Client(): S3Client {
  return new S3Client({
    endpoint: stack.env.S3_ENDPOINT,
    region: stack.env.S3_REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: stack.env.S3_ACCESS_KEY_ID, secretAccessKey: stack.env.S3_SECRET_ACCESS_KEY },
  });
}

/** Everything an upload may leave behind: rows, stored objects and processing workflows. */
async function leftBehind() {
  const [s] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_statements WHERE organization_id = $1`, [org.organizationId]);
  const [f] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_statement_files WHERE organization_id = $1`, [org.organizationId]);
  const [t] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_transactions WHERE organization_id = $1`, [org.organizationId]);
  const s3 = s3Client();
  let objects = 0;
  let unfinishedUploads = 0;
  try {
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: stack.env.S3_BUCKET }));
    objects = listed.KeyCount ?? 0;
    const multipart = await s3.send(new ListMultipartUploadsCommand({ Bucket: stack.env.S3_BUCKET }));
    unfinishedUploads = multipart.Uploads?.length ?? 0;
  } catch (err) {
    if ((err as { name?: string }).name !== 'NoSuchBucket') throw err;
  } finally {
    s3.destroy();
  }
  let workflows = 0;
  for await (const w of temporal.client.workflow.list({ query: `WorkflowType = 'bankStatement'` })) if (w) workflows++;
  return { statements: s.n as number, files: f.n as number, transactions: t.n as number, objects, unfinishedUploads, workflows };
}

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'], env: { STATEMENT_PARSE_THREADS: '1', STATEMENT_PARSE_QUEUE: '0' } });
  org = await stack.onboard('Statement Intake Org');
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
});
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
  await closeStatementParsePool();
});

describe('statement upload', () => {
  it('refuses a large file malformed near its end with 422 naming the element, leaving nothing stored', async () => {
    const before = await leftBehind();
    const file = camt('BAD', 2, 6000, { badAmountAt: { statement: 2, line: 5999 } });
    const res = await upload(file);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ type: 'request-validation', errors: [{ loc: ['body', 'file', expect.stringContaining('Stmt[2]')], msg: expect.stringContaining('"12.3.4" is not a decimal number'), type: 'statement_invalid' }] });
    expect(await leftBehind()).toEqual(before);
  });

  it('answers 503 with Retry-After while every parse thread is busy, storing nothing; the same file is accepted afterwards', async () => {
    const before = await leftBehind();
    // the only thread parses a large file of another upload of this process
    const big = camt('BUSY', 1, 60_000);
    const bytes = new Uint8Array(new SharedArrayBuffer(big.length));
    bytes.set(big);
    const pool = statementParsePool(loadCashAppConfig(stack.env));
    const occupying = pool.run('parseUpload', [{ bytes, options: {} }]);
    const file = camt('SMALL', 1, 3);
    const refused = await upload(file);
    // the premise: the large parse still held the thread when the upload came
    expect(pool.pending).toBe(1);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.body).toMatchObject({ type: 'service-unavailable', status: 503 });
    expect(await leftBehind()).toEqual(before);
    expect(JSON.parse((await occupying).statements[0]!.json).transactions).toHaveLength(60_000);

    const accepted = await upload(file);
    expect(accepted.status).toBe(200);
    expect((await waitForStatement(stack, org.token, accepted.body.id, { timeoutMs: 60_000 })).transaction_count).toBe(3);
  });

  it('stores a large file of several statements whole: every line of every statement, once', async () => {
    const file = camt('MULTI', 3, 4000);
    const res = await upload(file, 'multi.xml');
    expect(res.status).toBe(200);
    expect(res.body.statements.map((s: any) => s.file_position)).toEqual([1, 2, 3]);
    for (const s of res.body.statements) {
      const done = await waitForStatement(stack, org.token, s.id, { timeoutMs: 120_000 });
      expect(done.transaction_count).toBe(4000);
    }
    const rows = await stack.sql(
      `SELECT s.file_position, count(t.id)::int AS n, count(DISTINCT t.sequence)::int AS seqs, min(t.sequence) AS lo, max(t.sequence) AS hi,
              sum(t.amount)::text AS total, (s.closing_balance - s.opening_balance)::text AS expected
         FROM cash_app.bank_statements s JOIN cash_app.bank_transactions t ON t.statement_id = s.id
        WHERE s.file_sha256 = (SELECT file_sha256 FROM cash_app.bank_statements WHERE id = $1)
        GROUP BY s.id ORDER BY s.file_position`,
      [res.body.id],
    );
    expect(rows.map((r) => [r.file_position, r.n, r.seqs, r.lo, r.hi])).toEqual([
      [1, 4000, 4000, 1, 4000],
      [2, 4000, 4000, 1, 4000],
      [3, 4000, 4000, 1, 4000],
    ]);
    for (const r of rows) expect(r.total).toBe(r.expected);

    // the file is kept whole in object storage (streamed there as it arrived), not in its row
    const [stored] = await stack.sql(
      `SELECT f.object_key, f.content IS NULL AS no_bytes FROM cash_app.bank_statement_files f JOIN cash_app.bank_statements s ON s.file_id = f.id WHERE s.id = $1`,
      [res.body.id],
    );
    expect(stored).toMatchObject({ object_key: expect.stringMatching(new RegExp(`^bank-statement-files/${org.organizationId}/`)), no_bytes: true });
    const s3 = s3Client();
    try {
      const object = await s3.send(new GetObjectCommand({ Bucket: stack.env.S3_BUCKET, Key: stored.object_key }));
      expect(Buffer.from(await object.Body!.transformToByteArray()).equals(file)).toBe(true);
    } finally {
      s3.destroy();
    }
    // its object goes with its last statement
    const before = await leftBehind();
    for (const s of res.body.statements) expect((await stack.request('DELETE', `/v2/bank-statements/${s.id}`, { token: org.token })).status).toBe(204);
    const after = await leftBehind();
    expect(after).toMatchObject({ statements: before.statements - 3, files: before.files - 1, transactions: before.transactions - 12_000, objects: before.objects - 1, unfinishedUploads: 0 });
  });
});

describe('storing the lines of a statement again', () => {
  let db: Db;
  beforeAll(async () => {
    db = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 3 });
  });
  afterAll(async () => {
    await db?.destroy();
  });

  it('stores each line once when the store step runs again from the start or from its last heartbeat', async () => {
    const res = await upload(camt('RETRY', 1, 12_000), 'retry.xml');
    expect(res.status).toBe(200);
    const id = res.body.id;
    const done = await waitForStatement(stack, org.token, id, { timeoutMs: 120_000 });
    expect(done.transaction_count).toBe(12_000);
    const snapshot = async () => stack.sql(`SELECT unique_import_id, sequence, amount::text FROM cash_app.bank_transactions WHERE statement_id = $1 ORDER BY sequence`, [id]);
    const stored = await snapshot();
    expect(stored).toHaveLength(12_000);

    // A worker died part-way through storing: the lines from sequence 7,001 on are not stored yet.
    await stack.sql(`DELETE FROM cash_app.bank_transactions WHERE statement_id = $1 AND sequence > 7000`, [id]);
    await stack.sql(`UPDATE cash_app.bank_statements SET status = 'processing' WHERE id = $1`, [id]);
    // (the statement is `ready`, so its parse is gone: the step reads its file again, from object storage)
    const storage = new ObjectStorage({ endpoint: stack.env.S3_ENDPOINT, bucket: stack.env.S3_BUCKET, accessKeyId: stack.env.S3_ACCESS_KEY_ID, secretAccessKey: stack.env.S3_SECRET_ACCESS_KEY, region: stack.env.S3_REGION });
    const activities = createBankStatementActivities({ db, storage, chunkSize: 5000, chunkPauseMs: 0, heartbeatEveryMs: 0 });
    const input = { organizationId: org.organizationId, statementId: id };

    // retried from the start (its heartbeat lost): the first 7,000 are skipped, the rest stored once
    const fromStart = new MockActivityEnvironment({ attempt: 2 });
    expect(await fromStart.run(activities.storeStatementTransactions, input)).toEqual({ missing: false, total: 12_000, stored: 12_000 });
    expect(await snapshot()).toEqual(stored);

    // retried from its last heartbeat, after a chunk it had already stored
    const fromHeartbeat = new MockActivityEnvironment({ attempt: 3, heartbeatDetails: { next: 5000 } });
    expect(await fromHeartbeat.run(activities.storeStatementTransactions, input)).toEqual({ missing: false, total: 12_000, stored: 12_000 });
    expect(await snapshot()).toEqual(stored);
    storage.close();
  });
});
