/**
 * Knowledge review through the gateway: knowledge proposals (list, get, approve, reject, stale,
 * force), articles with their versions, playbook search, and deduction knowledge.
 *
 * SQL set-up: proposals are inserted with SQL (`proposal()` below). Only the playbook-extraction
 * workflow produces proposals and no endpoint creates one, so a test cannot reach a pending proposal
 * through the API. Everything after that (articles, versions, decisions) is done and read through the
 * gateway; articles exist only because a create proposal was approved through the API.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { customerRecord, pushCustomers } from './support/ledger.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;
/** ledger partners of org A (pushed through the middleware endpoint) and one of org B */
let acme: string;
let globex: string;
let foreignPartner: string;

const req = (method: string, path: string, org: Org | undefined, body?: unknown) => stack.request(method, path, { token: org?.token, body });

interface ProposalInput {
  action?: 'create' | 'revise' | 'archive';
  collection?: string | null;
  title?: string | null;
  description?: string | null;
  content?: string | null;
  knowledge_type?: string | null;
  customer_id?: string | null;
  segment_id?: string | null;
  article_id?: string | null;
  article_version?: number | null;
  extraction_id?: string | null;
  source_excerpts?: { text: string; memory_id: string; page: number }[];
}

/** A pending proposal as the extraction workflow writes it (no endpoint produces one: see the header). */
async function proposal(org: Org, p: ProposalInput = {}): Promise<string> {
  const id = randomUUID();
  await stack.sql(
    `INSERT INTO knowledge.proposals (id, organization_id, action, collection, title, description, content, knowledge_type,
       customer_id, segment_id, article_id, article_version, extraction_id, item_key, source_excerpts)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
    [
      id, org.organizationId, p.action ?? 'create', p.collection === undefined ? 'deductions' : p.collection, p.title === undefined ? 'Short-pay handling' : p.title,
      p.description ?? null, p.content === undefined ? 'When a customer short-pays, open a deduction case.' : p.content,
      p.knowledge_type === undefined ? 'procedural' : p.knowledge_type, p.customer_id ?? null, p.segment_id ?? null, p.article_id ?? null,
      p.article_version ?? null, p.extraction_id ?? null, p.extraction_id ? randomUUID() : null,
      JSON.stringify(p.source_excerpts ?? [{ text: 'open a deduction case', memory_id: randomUUID(), page: 1 }]),
    ],
  );
  return id;
}

async function approve(org: Org, id: string, body?: unknown) {
  return req('POST', `/v2/aether/playbook/proposals/${id}/approve`, org, body);
}

/** An article made the way the product makes it: a create proposal approved through the API. */
async function article(org: Org, p: ProposalInput = {}): Promise<string> {
  const res = await approve(org, await proposal(org, { ...p, action: 'create' }));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.article_id as string;
}

/**
 * Run `requests` while this test holds a row lock on `knowledge.<table>` row `id`, and release it only
 * once `waiters` backends wait on a lock: the requests then certainly overlap (whatever they lock or
 * update, they meet at that row), which a plain Promise.all cannot guarantee.
 */
async function overlapping<T>(table: 'articles' | 'proposals', id: string, waiters: number, requests: () => Promise<T>): Promise<T> {
  const holder = new pg.Client({ connectionString: stack.databaseUrl });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM knowledge.${table} WHERE id = $1 FOR UPDATE`, [id]);
    const running = requests();
    for (;;) {
      // polled on another connection: inside the holder's transaction pg_stat_activity is a frozen snapshot
      const rows = await stack.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (rows[0]!.n >= waiters) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await holder.query('COMMIT');
    return await running;
  } finally {
    await holder.end();
  }
}

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });
  orgA = await stack.onboard('Knowledge A');
  orgB = await stack.onboard('Knowledge B');
  const a = await pushCustomers(stack, orgA.apiKey, [
    customerRecord({ customer_code: 'K-1', name1: 'Acme Retail GmbH' }),
    customerRecord({ customer_code: 'K-2', name1: 'Globex Stores Ltd' }),
  ]);
  expect(a.status, JSON.stringify(a.body)).toBe(200);
  [acme, globex] = a.body.results.map((r) => r.service_id!) as [string, string];
  const b = await pushCustomers(stack, orgB.apiKey, [customerRecord({ customer_code: 'K-1', name1: 'Other Org Partner' })]);
  foreignPartner = b.body.results[0]!.service_id!;
});
afterAll(async () => stack?.close());

describe('approving proposals', () => {
  it('create: a new article at version 1 with the proposal\'s excerpts; the proposal records the reviewer', async () => {
    const excerpts = [{ text: 'Short payments under 50 EUR are written off.', memory_id: randomUUID(), page: 3 }];
    const id = await proposal(orgA, {
      title: 'Small short-pay write-off',
      description: 'write-off threshold',
      content: 'Short payments under 50 EUR are written off.',
      customer_id: acme,
      knowledge_type: 'declarative',
      source_excerpts: excerpts,
    });
    const pending = await req('GET', `/v2/aether/playbook/proposals/${id}`, orgA);
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({ object: 'knowledge_proposal', id, status: 'pending', action: 'create', stale: false, reviewed_at: null, reviewed_by: null, article_id: null });

    const res = await approve(orgA, id, { review_notes: 'looks right' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'approved', review_notes: 'looks right', reviewed_by: orgA.userId, stale: false });
    expect(new Date(res.body.reviewed_at).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const articleId = res.body.article_id;
    expect(articleId).toMatch(/^[0-9a-f-]{36}$/);

    const a = await req('GET', `/v2/aether/playbook/articles/${articleId}`, orgA);
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({
      object: 'knowledge_article', id: articleId, collection: 'deductions', title: 'Small short-pay write-off', description: 'write-off threshold',
      content: 'Short payments under 50 EUR are written off.', knowledge_type: 'declarative', customer_id: acme, segment_id: null, version: 1,
      status: 'live', archived_at: null,
    });
    expect(a.body.versions).toEqual([
      expect.objectContaining({ version: 1, action: 'create', content: 'Short payments under 50 EUR are written off.', source_excerpts: excerpts, proposal_id: id, created_by: orgA.userId }),
    ]);
  });

  it('revise: the target article\'s next version with the proposal\'s content; archive: archived as a version of its own', async () => {
    const articleId = await article(orgA, { title: 'Dispute intake', content: 'Log disputes within two days.', collection: 'disputes' });
    const revise = await proposal(orgA, {
      action: 'revise', article_id: articleId, article_version: 1, title: null, collection: 'disputes',
      content: 'Log disputes within one business day and notify the account owner.',
    });
    const r = await approve(orgA, revise);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'approved', article_id: articleId, stale: false });

    let a = await req('GET', `/v2/aether/playbook/articles/${articleId}`, orgA);
    expect(a.body).toMatchObject({ version: 2, status: 'live', title: 'Dispute intake', content: 'Log disputes within one business day and notify the account owner.' });
    expect(a.body.versions.map((v: { version: number; action: string; content: string }) => [v.version, v.action, v.content])).toEqual([
      [1, 'create', 'Log disputes within two days.'],
      [2, 'revise', 'Log disputes within one business day and notify the account owner.'],
    ]);
    expect(a.body.versions[1].proposal_id).toBe(revise);

    const archive = await proposal(orgA, { action: 'archive', article_id: articleId, article_version: 2, content: null, title: null });
    const x = await approve(orgA, archive);
    expect(x.status, JSON.stringify(x.body)).toBe(200);
    a = await req('GET', `/v2/aether/playbook/articles/${articleId}`, orgA);
    expect(a.body).toMatchObject({ version: 3, status: 'archived', content: 'Log disputes within one business day and notify the account owner.' });
    expect(a.body.archived_at).not.toBeNull();
    expect(a.body.versions.map((v: { action: string }) => v.action)).toEqual(['create', 'revise', 'archive']);
    expect(a.body.versions[2].content).toBe(a.body.versions[1].content);

    // an archived article cannot be revised or archived again, even with force
    const late = await proposal(orgA, { action: 'revise', article_id: articleId, article_version: 3, content: 'Too late.' });
    const refused = await approve(orgA, late, { force: true });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ type: 'conflict', status: 409 });
    expect((await req('GET', `/v2/aether/playbook/proposals/${late}`, orgA)).body.status).toBe('pending');
    expect((await req('GET', `/v2/aether/playbook/articles/${articleId}`, orgA)).body.version).toBe(3);
  });

  it('a create proposal without a collection is refused (409), nothing written', async () => {
    const id = await proposal(orgA, { collection: null });
    const before = (await req('GET', '/v2/aether/playbook/articles', orgA)).body.total_records;
    expect((await approve(orgA, id)).status).toBe(409);
    expect((await req('GET', '/v2/aether/playbook/articles', orgA)).body.total_records).toBe(before);
    expect((await req('GET', `/v2/aether/playbook/proposals/${id}`, orgA)).body.status).toBe('pending');
  });
});

describe('rejecting proposals', () => {
  it('rejects each action without touching articles, recording notes and reviewer', async () => {
    const articleId = await article(orgA, { title: 'Remittance parsing', content: 'Remittances name invoice numbers.', collection: 'cash_application' });
    const before = (await req('GET', '/v2/aether/playbook/articles', orgA)).body.total_records;
    const ids = [
      await proposal(orgA, { action: 'create', title: 'Never created' }),
      await proposal(orgA, { action: 'revise', article_id: articleId, article_version: 1, content: 'Never written.' }),
      await proposal(orgA, { action: 'archive', article_id: articleId, article_version: 1 }),
    ];
    for (const id of ids) {
      const res = await req('POST', `/v2/aether/playbook/proposals/${id}/reject`, orgA, { review_notes: 'contradicts the contract' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ status: 'rejected', review_notes: 'contradicts the contract', reviewed_by: orgA.userId });
      expect(res.body.reviewed_at).not.toBeNull();
    }
    expect((await req('GET', '/v2/aether/playbook/articles', orgA)).body.total_records).toBe(before);
    const a = await req('GET', `/v2/aether/playbook/articles/${articleId}`, orgA);
    expect(a.body).toMatchObject({ version: 1, status: 'live', content: 'Remittances name invoice numbers.' });
    expect(a.body.versions).toHaveLength(1);
  });

  it('needs review notes (422) and accepts reviewed_by only when it is the caller', async () => {
    const id = await proposal(orgA);
    const none = await req('POST', `/v2/aether/playbook/proposals/${id}/reject`, orgA, {});
    expect(none.status).toBe(422);
    expect(none.body.errors[0].loc).toEqual(['body', 'review_notes']);
    const blank = await req('POST', `/v2/aether/playbook/proposals/${id}/reject`, orgA, { review_notes: '   ' });
    expect(blank.status).toBe(422);
    const someoneElse = await req('POST', `/v2/aether/playbook/proposals/${id}/reject`, orgA, { review_notes: 'no', reviewed_by: randomUUID() });
    expect(someoneElse.status).toBe(422);
    expect(someoneElse.body.errors[0].loc).toEqual(['body', 'reviewed_by']);
    const unknownField = await approve(orgA, id, { force: false, approved_by: 'x' });
    expect(unknownField.status).toBe(422);
    expect((await req('GET', `/v2/aether/playbook/proposals/${id}`, orgA)).body.status).toBe('pending');
    const self = await req('POST', `/v2/aether/playbook/proposals/${id}/reject`, orgA, { review_notes: 'no', reviewed_by: orgA.userId });
    expect(self.status).toBe(200);
    expect(self.body.reviewed_by).toBe(orgA.userId);
  });
});

describe('a proposal is decided once', () => {
  it('a second approve or reject of a decided proposal is 409 and changes nothing', async () => {
    const approved = await proposal(orgA);
    const first = await approve(orgA, approved);
    expect(first.status).toBe(200);
    const rejected = await proposal(orgA);
    expect((await req('POST', `/v2/aether/playbook/proposals/${rejected}/reject`, orgA, { review_notes: 'duplicate' })).status).toBe(200);
    const articles = (await req('GET', '/v2/aether/playbook/articles', orgA)).body.total_records;

    for (const [id, state] of [[approved, 'approved'], [rejected, 'rejected']] as const) {
      const again = await approve(orgA, id, { force: true });
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ type: 'conflict', title: 'Conflict' });
      expect(again.body.detail).toContain(`already ${state}`);
      const reject = await req('POST', `/v2/aether/playbook/proposals/${id}/reject`, orgA, { review_notes: 'changed my mind' });
      expect(reject.status).toBe(409);
      const now = await req('GET', `/v2/aether/playbook/proposals/${id}`, orgA);
      expect(now.body.status).toBe(state);
      expect(now.body.review_notes).not.toBe('changed my mind');
    }
    expect((await req('GET', '/v2/aether/playbook/articles', orgA)).body.total_records).toBe(articles);
    expect((await req('GET', `/v2/aether/playbook/articles/${first.body.article_id}`, orgA)).body.versions).toHaveLength(1);
  });

  it('two concurrent approvals of one proposal: one 200, one 409, one article', async () => {
    const id = await proposal(orgA, { title: 'Concurrent create', collection: 'company' });
    const before = (await req('GET', '/v2/aether/playbook/articles?collection=company', orgA)).body.total_records;
    const results = await overlapping('proposals', id, 3, () => Promise.all([approve(orgA, id), approve(orgA, id), approve(orgA, id)]));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    expect((await req('GET', '/v2/aether/playbook/articles?collection=company', orgA)).body.total_records).toBe(before + 1);
  });
});

describe('stale proposals', () => {
  it('becomes stale when the target moved on; approving is 409 unless force', async () => {
    const articleId = await article(orgA, { title: 'Credit holds', content: 'Hold orders above the credit limit.', collection: 'credit_risk' });
    const p1 = await proposal(orgA, { action: 'revise', article_id: articleId, article_version: 1, content: 'Hold orders 10% above the limit.', collection: 'credit_risk' });
    const p2 = await proposal(orgA, { action: 'revise', article_id: articleId, article_version: 1, content: 'Hold orders 20% above the limit.', collection: 'credit_risk' });
    const p3 = await proposal(orgA, { action: 'archive', article_id: articleId, article_version: 1 });
    expect((await req('GET', `/v2/aether/playbook/proposals/${p2}`, orgA)).body.stale).toBe(false);

    expect((await approve(orgA, p1)).status).toBe(200);
    const p2now = await req('GET', `/v2/aether/playbook/proposals/${p2}`, orgA);
    expect(p2now.body).toMatchObject({ stale: true, article_version: 1, status: 'pending' });
    // the approved one is decided, never stale, though its target is past its version
    expect((await req('GET', `/v2/aether/playbook/proposals/${p1}`, orgA)).body.stale).toBe(false);
    const listed = await req('GET', `/v2/aether/playbook/proposals?status=pending&collection=credit_risk`, orgA);
    expect(listed.body.data.find((p: { id: string }) => p.id === p2).stale).toBe(true);

    const refused = await approve(orgA, p2);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/stale.*version 1.*version 2/);
    const archiveRefused = await approve(orgA, p3, { force: false });
    expect(archiveRefused.status).toBe(409);
    let a = await req('GET', `/v2/aether/playbook/articles/${articleId}`, orgA);
    expect(a.body).toMatchObject({ version: 2, content: 'Hold orders 10% above the limit.', status: 'live' });

    const forced = await approve(orgA, p2, { force: true });
    expect(forced.status, JSON.stringify(forced.body)).toBe(200);
    a = await req('GET', `/v2/aether/playbook/articles/${articleId}`, orgA);
    expect(a.body).toMatchObject({ version: 3, content: 'Hold orders 20% above the limit.' });
    expect(a.body.versions.map((v: { proposal_id: string }) => v.proposal_id).slice(1)).toEqual([p1, p2]);
  });

  it('concurrent approvals of two proposals against one article version serialize: one applies, the other is stale', async () => {
    const articleId = await article(orgA, { title: 'Payment plans', content: 'Offer three instalments.', collection: 'payments' });
    const a1 = await proposal(orgA, { action: 'revise', article_id: articleId, article_version: 1, content: 'Offer four instalments.', collection: 'payments' });
    const a2 = await proposal(orgA, { action: 'revise', article_id: articleId, article_version: 1, content: 'Offer six instalments.', collection: 'payments' });
    // both requests wait on the article row; without the approval's lock of it both would apply (version 3)
    const results = await overlapping('articles', articleId, 2, () => Promise.all([approve(orgA, a1), approve(orgA, a2)]));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const a = await req('GET', `/v2/aether/playbook/articles/${articleId}`, orgA);
    expect(a.body.version).toBe(2);
    expect(a.body.versions).toHaveLength(2);
    const winner = results.find((r) => r.status === 200)!.body;
    expect(a.body.content).toBe(winner.content);
  });
});

describe('listing proposals and articles', () => {
  it('filters proposals by status, extraction, collection and customer, newest first, paginated', async () => {
    const org = await stack.onboard('Proposal lists');
    const job = randomUUID();
    const customer = randomUUID();
    const p1 = await proposal(org, { extraction_id: job, collection: 'collections' });
    const p2 = await proposal(org, { extraction_id: job, collection: 'payments', customer_id: customer });
    const p3 = await proposal(org, { collection: 'payments' });
    await req('POST', `/v2/aether/playbook/proposals/${p3}/reject`, org, { review_notes: 'no' });
    const ids = async (query: string) => (await req('GET', `/v2/aether/playbook/proposals${query}`, org)).body.data.map((p: { id: string }) => p.id);

    expect(await ids('')).toEqual([p3, p2, p1]);
    expect(await ids(`?extraction_id=${job}`)).toEqual([p2, p1]);
    expect(await ids('?status=pending')).toEqual([p2, p1]);
    expect(await ids('?status=rejected')).toEqual([p3]);
    expect(await ids('?collection=payments')).toEqual([p3, p2]);
    expect(await ids(`?customer_id=${customer}`)).toEqual([p2]);
    const page = await req('GET', '/v2/aether/playbook/proposals?page=1&page_size=2', org);
    expect(page.body).toMatchObject({ current_page: 1, total_records: 3, next_page: null });
    expect(page.body.data.map((p: { id: string }) => p.id)).toEqual([p1]);
    for (const bad of ['?status=open', '?collection=nope', '?extraction_id=12', '?page_size=201']) {
      const r = await req('GET', `/v2/aether/playbook/proposals${bad}`, org);
      expect(r.status, bad).toBe(422);
      expect(r.body.type).toBe('request-validation');
    }
  });

  it('filters articles by collection, customer, segment and status', async () => {
    const org = await stack.onboard('Article lists');
    const segment = randomUUID();
    const general = await article(org, { collection: 'deductions' });
    const mine = await article(org, { collection: 'deductions', customer_id: acme });
    const seg = await article(org, { collection: 'collections', segment_id: segment });
    expect((await approve(org, await proposal(org, { action: 'archive', article_id: seg, article_version: 1 }))).status).toBe(200);
    const ids = async (query: string) => (await req('GET', `/v2/aether/playbook/articles${query}`, org)).body.data.map((a: { id: string }) => a.id);
    expect(await ids('')).toEqual([seg, mine, general]);
    expect(await ids('?collection=deductions')).toEqual([mine, general]);
    expect(await ids(`?customer_id=${acme}`)).toEqual([mine]);
    expect(await ids(`?segment_id=${segment}`)).toEqual([seg]);
    expect(await ids('?status=live')).toEqual([mine, general]);
    expect(await ids('?status=archived')).toEqual([seg]);
    expect((await req('GET', '/v2/aether/playbook/articles?status=deleted', org)).status).toBe(422);
    expect((await req('GET', `/v2/aether/playbook/articles/${randomUUID()}`, org)).body).toMatchObject({ status: 404, type: 'entity-not-found', title: 'Entity not found' });
  });
});

describe('GET /v2/aether/playbook/search', () => {
  let org: Org;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    org = await stack.onboard('Search');
    ids.title = await article(org, { title: 'Freight deduction procedure', content: 'Check the bill of lading before accepting any claim.', collection: 'deductions' });
    ids.content = await article(org, { title: 'Claims', content: 'A freight claim needs the carrier invoice. Freight costs are deducted from the payment.', collection: 'deductions' });
    ids.once = await article(org, { title: 'Carrier list', content: 'Our carriers also invoice freight separately.', collection: 'company' });
    ids.unrelated = await article(org, { title: 'Dunning levels', content: 'Send the second reminder after 14 days.', collection: 'collections' });
    // three articles with the same text and different customer scopes
    const same = { title: 'Pallet returns', content: 'Pallet returns are credited after the warehouse confirms them.', collection: 'deductions' };
    ids.acme = await article(org, { ...same, customer_id: acme });
    ids.general = await article(org, same);
    ids.globex = await article(org, { ...same, customer_id: globex });
    ids.archived = await article(org, { title: 'Pallet returns (old)', content: 'Pallet returns were credited monthly.', collection: 'deductions' });
    expect((await approve(org, await proposal(org, { action: 'archive', article_id: ids.archived, article_version: 1 }))).status).toBe(200);
  });
  const search = (query: string, who: Org = org) => req('GET', `/v2/aether/playbook/search?${query}`, who);

  it('ranks title matches above content matches, returns rank and a highlighted headline', async () => {
    const res = await search('q=freight');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const order = res.body.data.map((h: { id: string }) => h.id);
    expect(order).toEqual([ids.title, ids.content, ids.once]);
    expect(res.body.total_records).toBe(3);
    const ranks = res.body.data.map((h: { rank: number }) => h.rank);
    expect(ranks[0]).toBeGreaterThan(ranks[1]);
    expect(ranks[1]).toBeGreaterThan(ranks[2]);
    expect(res.body.data[1].headline).toContain('**Freight**');
    expect(res.body.data[1]).toMatchObject({ object: 'knowledge_article', status: 'live', collection: 'deductions' });
    // web-search syntax: exclusion and phrases
    expect((await search('q=freight -carrier')).body.data.map((h: { id: string }) => h.id)).toEqual([ids.title]);
    expect((await search(`q=${encodeURIComponent('"bill of lading"')}`)).body.data.map((h: { id: string }) => h.id)).toEqual([ids.title]);
    expect((await search('q=freight&collection=company')).body.data.map((h: { id: string }) => h.id)).toEqual([ids.once]);
  });

  it('boosts the customer\'s own scope, then general articles, then other customers\'', async () => {
    const plain = (await search('q=pallet returns')).body.data.map((h: { id: string }) => h.id);
    // equal text, equal rank: newest first; the archived one never appears
    expect(plain).toEqual([ids.globex, ids.general, ids.acme]);
    const forAcme = await search(`q=pallet returns&customer_id=${acme}`);
    expect(forAcme.body.data.map((h: { id: string }) => h.id)).toEqual([ids.acme, ids.general, ids.globex]);
    const [own, general, other] = forAcme.body.data.map((h: { rank: number }) => h.rank);
    expect(own).toBeCloseTo(general * 2, 5);
    expect(other).toBeCloseTo(general / 2, 5);
    const forGlobex = await search(`q=pallet returns&customer_id=${globex}`);
    expect(forGlobex.body.data.map((h: { id: string }) => h.id)).toEqual([ids.globex, ids.general, ids.acme]);
  });

  it('paginates, matches nothing for stop words, validates q', async () => {
    const p = await search('q=pallet&page_size=2&page=1');
    expect(p.body).toMatchObject({ current_page: 1, total_records: 3, next_page: null });
    expect(p.body.data).toHaveLength(1);
    const past = await search('q=pallet&page_size=2&page=5');
    expect(past.body).toMatchObject({ data: [], total_records: 3 });
    expect((await search('q=the and of')).body).toMatchObject({ data: [], total_records: 0 });
    for (const bad of ['', 'q=', 'q=%20%20', `q=${'x'.repeat(501)}`, 'q=a&customer_id=nope', 'q=a&page_size=101']) {
      const r = await search(bad);
      expect(r.status, bad).toBe(422);
    }
    // characters that are tsquery syntax elsewhere are plain input to websearch_to_tsquery
    expect((await search(`q=${encodeURIComponent("freight & | ! ( ' :*")}`)).status).toBe(200);
  });

  it('another organization finds nothing of it', async () => {
    expect((await search('q=freight', orgB)).body).toMatchObject({ data: [], total_records: 0 });
  });
});

describe('tenant isolation of proposals and articles', () => {
  it('another organization\'s proposal or article is 404 on every endpoint and stays untouched', async () => {
    const articleId = await article(orgA, { title: 'Isolation', content: 'Tenant data.', collection: 'company' });
    const pending = await proposal(orgA, { action: 'revise', article_id: articleId, article_version: 1, content: 'Hijacked.' });
    for (const [method, path, body] of [
      ['GET', `/v2/aether/playbook/proposals/${pending}`, undefined],
      ['POST', `/v2/aether/playbook/proposals/${pending}/approve`, { force: true }],
      ['POST', `/v2/aether/playbook/proposals/${pending}/reject`, { review_notes: 'x' }],
      ['GET', `/v2/aether/playbook/articles/${articleId}`, undefined],
    ] as const) {
      const r = await req(method, path, orgB, body);
      expect(r.status, path).toBe(404);
      expect(r.body).toMatchObject({ type: 'entity-not-found', title: 'Entity not found', status: 404 });
    }
    const listed = await req('GET', '/v2/aether/playbook/proposals', orgB);
    expect(listed.body.data.map((p: { id: string }) => p.id)).not.toContain(pending);
    expect((await req('GET', `/v2/aether/playbook/articles`, orgB)).body.data.map((a: { id: string }) => a.id)).not.toContain(articleId);
    expect((await req('GET', `/v2/aether/playbook/proposals/${pending}`, orgA)).body.status).toBe('pending');
    expect((await req('GET', `/v2/aether/playbook/articles/${articleId}`, orgA)).body).toMatchObject({ version: 1, content: 'Tenant data.' });
    // an unknown id and an unauthenticated call
    expect((await req('GET', `/v2/aether/playbook/proposals/${randomUUID()}`, orgA)).status).toBe(404);
    expect((await req('GET', `/v2/aether/playbook/proposals/not-a-uuid`, orgA)).status).toBe(422);
    expect((await req('GET', '/v2/aether/playbook/proposals', undefined)).status).toBe(401);
    expect((await req('GET', '/v2/aether/playbook/search?q=x', undefined)).status).toBe(401);
  });
});

describe('deduction knowledge', () => {
  const base = '/v2/deductions/knowledge';

  it('PUT creates the customer entry, a second PUT updates it with the same id; partner_name from the ledger', async () => {
    const created = await req('PUT', `${base}/partners/${acme}/parse_remittance`, orgA, { content: 'Acme sends remittances as PDF.' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      object: 'deduction_knowledge', operation: 'parse_remittance', scope: 'customer', content: 'Acme sends remittances as PDF.',
      partner_id: acme, partner_name: 'Acme Retail GmbH',
    });
    const updated = await req('PUT', `${base}/partners/${acme}/parse_remittance`, orgA, { content: 'Acme sends remittances as CSV.' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.body.id, content: 'Acme sends remittances as CSV.', scope: 'customer' });
    const rows = await stack.sql(`SELECT count(*)::int AS n FROM knowledge.deduction_knowledge WHERE partner_id = $1`, [acme]);
    expect(rows[0].n).toBe(1);
    // the partner's name follows the ledger
    expect((await pushCustomers(stack, orgA.apiKey, [customerRecord({ customer_code: 'K-1', name1: 'Acme Retail AG' })])).status).toBe(200);
    const renamed = await req('PUT', `${base}/partners/${acme}/parse_remittance`, orgA, { content: 'Acme sends remittances as CSV.' });
    expect(renamed.body.partner_name).toBe('Acme Retail AG');
  });

  it('GET returns the effective entry per operation: the customer\'s, else the global one', async () => {
    const g1 = await req('PUT', `${base}/match_vendor`, orgA, { content: 'Match vendors by VAT id.' });
    expect(g1.status, JSON.stringify(g1.body)).toBe(200);
    expect(g1.body).toMatchObject({ scope: 'global', partner_id: null, partner_name: null, operation: 'match_vendor' });
    const g1again = await req('PUT', `${base}/match_vendor`, orgA, { content: 'Match vendors by VAT id or name.' });
    expect(g1again.body.id).toBe(g1.body.id);
    await req('PUT', `${base}/generate_alerts`, orgA, { content: 'Alert above 1,000 EUR.' });
    await req('PUT', `${base}/partners/${globex}/generate_alerts`, orgA, { content: 'Globex: alert above 100 EUR.' });

    const res = await req('GET', `${base}/partners/${globex}`, orgA);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'deduction_knowledge_partner', partner_id: globex, partner_name: 'Globex Stores Ltd' });
    const byOp = Object.fromEntries(res.body.data.map((e: { operation: string }) => [e.operation, e]));
    expect(Object.keys(byOp)).toEqual(['match_vendor', 'generate_alerts']);
    expect(byOp.match_vendor).toMatchObject({ scope: 'global', content: 'Match vendors by VAT id or name.', partner_id: null });
    expect(byOp.generate_alerts).toMatchObject({ scope: 'customer', content: 'Globex: alert above 100 EUR.', partner_id: globex, partner_name: 'Globex Stores Ltd' });
    expect(res.body.operations_without_entry).toHaveLength(9);
    expect(res.body.operations_without_entry).toContain('parse_backup');

    const globals = await req('GET', base, orgA);
    expect(globals.body.map((e: { operation: string }) => e.operation)).toEqual(['match_vendor', 'generate_alerts']);

    // DELETE the customer entry (204): the global one becomes effective again; a second DELETE is 404
    const del = await req('DELETE', `${base}/partners/${globex}/generate_alerts`, orgA);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const after = await req('GET', `${base}/partners/${globex}`, orgA);
    expect(after.body.data.find((e: { operation: string }) => e.operation === 'generate_alerts')).toMatchObject({ scope: 'global', content: 'Alert above 1,000 EUR.' });
    expect((await req('DELETE', `${base}/partners/${globex}/generate_alerts`, orgA)).status).toBe(404);
    // deleting a global entry
    expect((await req('DELETE', `${base}/generate_alerts`, orgA)).status).toBe(204);
    expect((await req('GET', `${base}/partners/${globex}`, orgA)).body.operations_without_entry).toContain('generate_alerts');
    expect((await req('DELETE', `${base}/generate_alerts`, orgA)).status).toBe(404);
  });

  it('an operation outside the 11 is 422 listing them; nothing is written', async () => {
    for (const path of [`${base}/partners/${acme}/approve_everything`, `${base}/approve_everything`]) {
      const r = await req('PUT', path, orgA, { content: 'x' });
      expect(r.status, path).toBe(422);
      expect(r.body.type).toBe('request-validation');
      expect(r.body.errors[0].loc).toEqual(['path', 'operation']);
      for (const op of ['identify_document_customer', 'match_claims_and_deductions', 'generate_credit_memo', 'assign_line_item_reason_codes']) expect(r.body.errors[0].msg).toContain(op);
    }
    expect((await req('PUT', `${base}/partners/${acme}/parse_backup`, orgA, { content: 42 })).status).toBe(422);
    expect((await req('PUT', `${base}/partners/${acme}/parse_backup`, orgA, { content: 'x', scope: 'global' })).status).toBe(422);
    const rows = await stack.sql(`SELECT count(*)::int AS n FROM knowledge.deduction_knowledge WHERE organization_id = $1 AND operation = 'parse_backup'`, [orgA.organizationId]);
    expect(rows[0].n).toBe(0);
  });

  it('a member sees only partners of their business units (or of none); a member\'s review records the member', async () => {
    const north = (await req('POST', '/v2/business-units', orgA, { name: 'North' })).body.id as string;
    const south = (await req('POST', '/v2/business-units', orgA, { name: 'South' })).body.id as string;
    const pushed = await pushCustomers(stack, orgA.apiKey, [{ ...customerRecord({ customer_code: 'K-S', name1: 'Southern Foods' }), business_unit_id: south }]);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(200);
    const southern = pushed.body.results[0]!.service_id!;
    const created = await req('POST', '/v2/users', orgA, { email: 'north.member@a.example', name: 'Nora', role: 'member', business_unit_ids: [north] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { runCli } = await import('@rp/admin/cli');
    const t = (await runCli(['token', 'issue', '--org', orgA.organizationId, '--user', created.body.id], stack.env)) as { token: string };
    const memberOrg = { ...orgA, userId: created.body.id as string, token: t.token };

    for (const [method, path, body] of [
      ['PUT', `${base}/partners/${southern}/parse_backup`, { content: 'x' }],
      ['GET', `${base}/partners/${southern}`, undefined],
      ['DELETE', `${base}/partners/${southern}/parse_backup`, undefined],
    ] as const) {
      expect((await req(method, path, memberOrg, body)).status, `${method} ${path}`).toBe(404);
    }
    expect((await req('GET', `${base}/partners/${southern}`, orgA)).status).toBe(200);
    // a partner of no business unit is visible to the member
    expect((await req('PUT', `${base}/partners/${acme}/parse_backup`, memberOrg, { content: 'Acme backup is a PDF.' })).status).toBe(200);

    const id = await proposal(orgA);
    const approved = await approve(memberOrg, id);
    expect(approved.status).toBe(200);
    expect(approved.body.reviewed_by).toBe(memberOrg.userId);
    expect((await req('GET', `/v2/aether/playbook/articles/${approved.body.article_id}`, orgA)).body.versions[0].created_by).toBe(memberOrg.userId);
  });

  it('an unknown or other-organization partner is 404 on every partner endpoint; globals are per organization', async () => {
    for (const partner of [foreignPartner, randomUUID()]) {
      for (const [method, path, body] of [
        ['PUT', `${base}/partners/${partner}/parse_backup`, { content: 'x' }],
        ['GET', `${base}/partners/${partner}`, undefined],
        ['DELETE', `${base}/partners/${partner}/parse_backup`, undefined],
      ] as const) {
        const r = await req(method, path, orgA, body);
        expect(r.status, `${method} ${path}`).toBe(404);
        expect(r.body).toMatchObject({ type: 'entity-not-found', title: 'Entity not found' });
      }
    }
    // org B's own partner sees neither org A's global entries nor org A's customer entries
    await req('PUT', `${base}/classify_document_type`, orgA, { content: 'A only' });
    const b = await req('GET', `${base}/partners/${foreignPartner}`, orgB);
    expect(b.status).toBe(200);
    expect(b.body.data).toEqual([]);
    expect(b.body.operations_without_entry).toHaveLength(11);
    expect((await req('GET', base, orgB)).body).toEqual([]);
    expect((await req('DELETE', `${base}/classify_document_type`, orgB)).status).toBe(404);
    expect((await req('GET', base, orgA)).body.map((e: { operation: string }) => e.operation)).toContain('classify_document_type');
    expect((await req('PUT', `${base}/partners/${acme}/parse_backup`, undefined, { content: 'x' })).status).toBe(401);
  });
});
