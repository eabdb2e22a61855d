/**
 * Knowledge and business units, through the gateway: a member restricted to business unit North does
 * not see articles, article versions, proposals, search hits or statistics linked to a customer (a
 * ledger partner) of business unit South; they answer 404 by id like a random id, approve and reject
 * included, and nothing changes. Knowledge of North customers, of customers without a unit, without a
 * customer, or linked to a segment stays visible. The admin ('*') sees everything.
 *
 * SQL set-up: pending proposals are inserted with SQL (`proposal()` below), as in
 * knowledge-review.test.ts: only the playbook-extraction workflow produces proposals and no endpoint
 * creates one. Everything else goes through the API: units, the member, partners (middleware push), the
 * segment, and every article (a create proposal approved by the admin through the API). One more
 * SQL step: the last test moves an article to a South customer inside a transaction it holds open, to
 * make an approval wait on that article's row lock (an interleaving no API call can force).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerRecord, pushCustomers } from './support/ledger.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let north: string;
let south: string;
/** member of North only */
let member: string;
/** partners: of North, of South, of no unit */
let custNorth: string;
let custSouth: string;
let custNone: string;
let segment: string;
/** articles (live), by what they are linked to */
const art: Record<'north' | 'south' | 'none' | 'unassigned' | 'segment' | 'movedToNorth', string> = {} as never;
/** pending proposals */
const prop: Record<'north' | 'south' | 'none' | 'reviseSouthArticle' | 'segmentSouth', string> = {} as never;

/** A word only this file's articles carry, for search. */
const WORD = 'quillwort';

const req = (method: string, path: string, token: string, body?: unknown) => stack.request(method, path, { token, body });

interface ProposalInput {
  action?: 'create' | 'revise' | 'archive';
  title?: string;
  content?: string;
  customer_id?: string | null;
  segment_id?: string | null;
  article_id?: string | null;
  article_version?: number | null;
}

/** A pending proposal as the extraction workflow writes it (no endpoint produces one: see the header). */
async function proposal(p: ProposalInput = {}): Promise<string> {
  const id = randomUUID();
  await stack.sql(
    `INSERT INTO knowledge.proposals (id, organization_id, action, collection, title, content, knowledge_type, customer_id, segment_id,
       article_id, article_version, source_excerpts)
     VALUES ($1, $2, $3, 'deductions', $4, $5, 'procedural', $6, $7, $8, $9, $10)`,
    [
      id, org.organizationId, p.action ?? 'create', p.title ?? 'Short-pay handling', p.content ?? `Short payments: open a ${WORD} deduction case.`,
      p.customer_id ?? null, p.segment_id ?? null, p.article_id ?? null, p.article_version ?? null,
      JSON.stringify([{ text: 'open a deduction case', memory_id: randomUUID(), page: 1 }]),
    ],
  );
  return id;
}

/** An article the way the product makes one: a create proposal approved (by the admin) through the API. */
async function article(p: ProposalInput): Promise<string> {
  const res = await req('POST', `/v2/aether/playbook/proposals/${await proposal({ ...p, action: 'create' })}/approve`, org.token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.article_id as string;
}

const ids = (res: { body: any }) => (res.body.data as { id: string }[]).map((x) => x.id).sort();
const sorted = (xs: string[]) => [...xs].sort();

/** The 404 a random id of the same kind gets: same status, type and title. */
async function expectLikeRandom(res: { status: number; body: any }, randomPath: string, method = 'GET', body?: unknown) {
  const random = await req(method, randomPath, org.token, body);
  expect(random.status).toBe(404);
  expect(res.status, JSON.stringify(res.body)).toBe(404);
  expect(res.body.type).toBe(random.body.type);
  expect(res.body.title).toBe(random.body.title);
}

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });
  org = await stack.onboard('Knowledge Units');
  const unit = async (name: string) => {
    const res = await req('POST', '/v2/business-units', org.token, { name });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.id as string;
  };
  north = await unit('North');
  south = await unit('South');
  const created = await req('POST', '/v2/users', org.token, { email: 'north@knowledge.example', name: 'North member', role: 'member', business_unit_ids: [north], permissions: [] });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  member = ((await runCli(['token', 'issue', '--org', org.organizationId, '--user', created.body.id], stack.env)) as { token: string }).token;

  const pushed = await pushCustomers(stack, org.apiKey, [
    { ...customerRecord({ customer_code: 'KU-N', name1: 'Nord Handel GmbH' }), business_unit_id: north },
    { ...customerRecord({ customer_code: 'KU-S', name1: 'Sued Handel GmbH' }), business_unit_id: south },
    customerRecord({ customer_code: 'KU-U', name1: 'Ohne Einheit GmbH' }),
  ]);
  expect(pushed.body.results.every((r) => r.success), JSON.stringify(pushed.body)).toBe(true);
  [custNorth, custSouth, custNone] = pushed.body.results.map((r) => r.service_id!) as [string, string, string];
  const seg = await req('POST', '/v2/customer-segments', org.token, { name: 'Euro customers', priority: 1, conditions: { field: 'currency', op: 'eq', value: 'EUR' } });
  expect(seg.status, JSON.stringify(seg.body)).toBe(200);
  segment = seg.body.id;

  art.north = await article({ title: 'North rule', customer_id: custNorth });
  art.south = await article({ title: 'South rule', customer_id: custSouth });
  art.none = await article({ title: 'General rule' });
  art.unassigned = await article({ title: 'Unassigned customer rule', customer_id: custNone });
  art.segment = await article({ title: 'Segment rule', segment_id: segment });
  // made for a South customer, then revised (by the admin) to a North one: version 1 is South's
  art.movedToNorth = await article({ title: 'Moved rule', customer_id: custSouth });
  const moved = await proposal({ action: 'revise', article_id: art.movedToNorth, article_version: 1, customer_id: custNorth, content: `North now: ${WORD} case.` });
  expect((await req('POST', `/v2/aether/playbook/proposals/${moved}/approve`, org.token)).status).toBe(200);

  prop.north = await proposal({ title: 'North proposal', customer_id: custNorth });
  prop.south = await proposal({ title: 'South proposal', customer_id: custSouth });
  prop.none = await proposal({ title: 'General proposal' });
  // the proposal's own customer is North, but it would revise South's article
  prop.reviseSouthArticle = await proposal({ action: 'revise', article_id: art.south, article_version: 1, customer_id: custNorth, title: 'Take over South rule' });
  // linked to a segment and to a South customer: the customer decides
  prop.segmentSouth = await proposal({ title: 'Segment and South proposal', customer_id: custSouth, segment_id: segment });
});
afterAll(async () => stack?.close());

const visibleArticles = () => [art.north, art.none, art.unassigned, art.segment, art.movedToNorth];
const hiddenArticles = () => [art.south];
const visibleProposals = () => [prop.north, prop.none];
const hiddenProposals = () => [prop.south, prop.reviseSouthArticle, prop.segmentSouth];

describe('a member restricted to a business unit', () => {
  it('statistics count only the knowledge the member can see; the admin counts all', async () => {
    const [asMember, asAdmin] = await Promise.all([req('GET', '/v2/aether/playbook/stats', member), req('GET', '/v2/aether/playbook/stats', org.token)]);
    expect(asMember.status).toBe(200);
    expect(asAdmin.status).toBe(200);
    const deductions = (b: any) => b.collections.find((c: { collection: string }) => c.collection === 'deductions');
    expect(asAdmin.body).toMatchObject({ total_articles: 6, total_collections: 1, pending_proposals: 5 });
    expect(deductions(asAdmin.body)).toEqual({ collection: 'deductions', article_count: 6, pending_proposal_count: 5 });
    expect(asMember.body).toMatchObject({ total_articles: 5, total_collections: 1, pending_proposals: 2 });
    expect(deductions(asMember.body)).toEqual({ collection: 'deductions', article_count: 5, pending_proposal_count: 2 });
  });

  it('lists articles of its unit, of customers without a unit, without a customer and of segments, not those of another unit', async () => {
    const res = await req('GET', '/v2/aether/playbook/articles?page_size=200', member);
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(sorted(visibleArticles()));
    expect(res.body.total_records).toBe(5);
    const filtered = await req('GET', `/v2/aether/playbook/articles?customer_id=${custSouth}`, member);
    expect(filtered.status).toBe(200);
    expect(filtered.body.data).toEqual([]);
    expect(filtered.body.total_records).toBe(0);
  });

  it('gets 404 for an article of another unit, like a random id; its own unit\'s and the unlinked ones answer', async () => {
    for (const id of hiddenArticles()) {
      await expectLikeRandom(await req('GET', `/v2/aether/playbook/articles/${id}`, member), `/v2/aether/playbook/articles/${randomUUID()}`);
    }
    for (const id of visibleArticles()) {
      const res = await req('GET', `/v2/aether/playbook/articles/${id}`, member);
      expect(res.status, id).toBe(200);
      expect(res.body.id).toBe(id);
    }
  });

  it('does not see the versions of an article made while it belonged to another unit\'s customer', async () => {
    const asMember = await req('GET', `/v2/aether/playbook/articles/${art.movedToNorth}`, member);
    expect(asMember.status).toBe(200);
    expect(asMember.body).toMatchObject({ version: 2, customer_id: custNorth });
    expect(asMember.body.versions.map((v: { version: number; customer_id: string }) => [v.version, v.customer_id])).toEqual([[2, custNorth]]);
    const asAdmin = await req('GET', `/v2/aether/playbook/articles/${art.movedToNorth}`, org.token);
    expect(asAdmin.body.versions.map((v: { version: number; customer_id: string }) => [v.version, v.customer_id])).toEqual([[1, custSouth], [2, custNorth]]);
  });

  it('search leaves out another unit\'s articles (hits and total), with or without a customer boost', async () => {
    for (const boost of ['', `&customer_id=${custSouth}`, `&customer_id=${custNorth}`]) {
      const res = await req('GET', `/v2/aether/playbook/search?q=${WORD}&page_size=100${boost}`, member);
      expect(res.status).toBe(200);
      expect(ids(res), boost).toEqual(sorted(visibleArticles()));
      expect(res.body.total_records).toBe(5);
    }
    // past the last page the total is counted apart: the same rule
    const past = await req('GET', `/v2/aether/playbook/search?q=${WORD}&page=3&page_size=2`, member);
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.total_records).toBe(5);
  });

  it('lists proposals of its unit and unlinked ones, not those of another unit\'s customer or revising another unit\'s article', async () => {
    const res = await req('GET', '/v2/aether/playbook/proposals?status=pending&page_size=200', member);
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(sorted(visibleProposals()));
    expect(res.body.total_records).toBe(2);
  });

  it('gets 404 on another unit\'s proposals by id, approve and reject included, and nothing changes', async () => {
    const random = randomUUID();
    for (const id of hiddenProposals()) {
      await expectLikeRandom(await req('GET', `/v2/aether/playbook/proposals/${id}`, member), `/v2/aether/playbook/proposals/${random}`);
      await expectLikeRandom(
        await req('POST', `/v2/aether/playbook/proposals/${id}/approve`, member, { force: true }),
        `/v2/aether/playbook/proposals/${random}/approve`,
        'POST',
        { force: true },
      );
      await expectLikeRandom(
        await req('POST', `/v2/aether/playbook/proposals/${id}/reject`, member, { review_notes: 'not ours' }),
        `/v2/aether/playbook/proposals/${random}/reject`,
        'POST',
        { review_notes: 'not ours' },
      );
      const after = await req('GET', `/v2/aether/playbook/proposals/${id}`, org.token);
      expect(after.body).toMatchObject({ status: 'pending', reviewed_by: null });
    }
    const southArticle = await req('GET', `/v2/aether/playbook/articles/${art.south}`, org.token);
    expect(southArticle.body).toMatchObject({ version: 1, customer_id: custSouth, title: 'South rule' });
  });

  it('reviews its own unit\'s proposals and sees the article it made', async () => {
    const res = await req('POST', `/v2/aether/playbook/proposals/${prop.north}/approve`, member);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'approved', customer_id: custNorth });
    expect((await req('GET', `/v2/aether/playbook/articles/${res.body.article_id}`, member)).status).toBe(200);
    const rejected = await req('POST', `/v2/aether/playbook/proposals/${prop.none}/reject`, member, { review_notes: 'duplicate' });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect(rejected.body.status).toBe('rejected');
  });
});

describe('the admin (every business unit)', () => {
  it('sees every article, proposal and search hit', async () => {
    const articles = await req('GET', '/v2/aether/playbook/articles?page_size=200', org.token);
    expect(ids(articles)).toEqual(expect.arrayContaining([...visibleArticles(), ...hiddenArticles()]));
    const hits = await req('GET', `/v2/aether/playbook/search?q=${WORD}&page_size=100`, org.token);
    expect(ids(hits)).toEqual(expect.arrayContaining([...visibleArticles(), ...hiddenArticles()]));
    const proposals = await req('GET', '/v2/aether/playbook/proposals?page_size=200', org.token);
    expect(ids(proposals)).toEqual(expect.arrayContaining([...visibleProposals(), ...hiddenProposals()]));
    for (const id of hiddenArticles()) expect((await req('GET', `/v2/aether/playbook/articles/${id}`, org.token)).status).toBe(200);
    for (const id of hiddenProposals()) expect((await req('GET', `/v2/aether/playbook/proposals/${id}`, org.token)).status).toBe(200);
  });

  it('can still decide a proposal the member could not see', async () => {
    const res = await req('POST', `/v2/aether/playbook/proposals/${prop.south}/reject`, org.token, { review_notes: 'South decides' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe('rejected');
  });
});

describe('approving while the target article moves out of the member\'s units', () => {
  it('the target\'s customer is checked again under its row lock: 404, nothing archived, the proposal still pending', async () => {
    const target = await article({ title: 'Soon South rule', customer_id: custNorth });
    const archive = await proposal({ action: 'archive', article_id: target, article_version: 1, customer_id: null });
    expect((await req('GET', `/v2/aether/playbook/proposals/${archive}`, member)).status).toBe(200);

    const holder = new pg.Client({ connectionString: stack.databaseUrl });
    await holder.connect();
    let res: { status: number; body: any };
    try {
      await holder.query('BEGIN');
      await holder.query('UPDATE knowledge.articles SET customer_id = $1 WHERE id = $2', [custSouth, target]);
      const running = req('POST', `/v2/aether/playbook/proposals/${archive}/approve`, member);
      for (;;) {
        // the approval read the proposal (its target still North) and now waits for the article's lock
        const rows = await stack.sql<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        if (rows[0]!.n >= 1) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await holder.query('COMMIT');
      res = await running;
    } finally {
      await holder.end();
    }
    expect(res.status, JSON.stringify(res.body)).toBe(404);
    expect((await req('GET', `/v2/aether/playbook/proposals/${archive}`, org.token)).body).toMatchObject({ status: 'pending', reviewed_by: null });
    expect((await req('GET', `/v2/aether/playbook/articles/${target}`, org.token)).body).toMatchObject({ status: 'live', version: 1, customer_id: custSouth });
    expect((await req('GET', `/v2/aether/playbook/articles/${target}`, member)).status).toBe(404);
  });
});
