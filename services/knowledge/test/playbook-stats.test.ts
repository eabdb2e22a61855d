import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type TestStack, type Org } from '../../../test/support/stack.js';
import { COLLECTIONS } from '../src/types.js';

let stack: TestStack;
let orgA: Org;
let orgB: Org;

async function article(org: Org, collection: string, opts: { archived?: boolean } = {}) {
  await stack.sql(
    `INSERT INTO knowledge.articles (id, organization_id, collection, title, content, archived_at)
     VALUES (gen_random_uuid(), $1, $2, 'Article', 'Body', $3)`,
    [org.organizationId, collection, opts.archived ? new Date() : null],
  );
}

async function proposal(org: Org, collection: string | null, status: 'pending' | 'approved' | 'rejected', action = 'create') {
  await stack.sql(
    `INSERT INTO knowledge.proposals (id, organization_id, collection, status, action, title, content)
     VALUES (gen_random_uuid(), $1, $2, $3, $4, 'Proposal', 'Body')`,
    [org.organizationId, collection, status, action],
  );
}

beforeAll(async () => {
  stack = await startStack();
  orgA = await stack.onboard('Org A');
  orgB = await stack.onboard('Org B');
});
afterAll(async () => stack?.close());

describe('GET /v2/aether/playbook/stats', () => {
  it('reports every collection with zero counts for an empty playbook', async () => {
    const fresh = await stack.onboard();
    const res = await stack.request('GET', '/v2/aether/playbook/stats', { token: fresh.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      total_articles: 0,
      total_collections: 0,
      pending_proposals: 0,
      collections: COLLECTIONS.map((collection) => ({ collection, article_count: 0, pending_proposal_count: 0 })),
    });
  });

  it('counts live articles and pending proposals of the caller\'s organization only', async () => {
    // Org A: 3 live + 1 archived cash_application articles, 2 live deductions, only an archived dispute.
    for (let i = 0; i < 3; i++) await article(orgA, 'cash_application');
    await article(orgA, 'cash_application', { archived: true });
    await article(orgA, 'deductions');
    await article(orgA, 'deductions');
    await article(orgA, 'disputes', { archived: true });
    // Org A proposals: pending ones in cash_application (2), payments (1) and without collection (1);
    // approved and rejected ones do not count.
    await proposal(orgA, 'cash_application', 'pending');
    await proposal(orgA, 'cash_application', 'pending', 'revise');
    await proposal(orgA, 'payments', 'pending', 'archive');
    await proposal(orgA, null, 'pending');
    await proposal(orgA, 'deductions', 'approved');
    await proposal(orgA, 'disputes', 'rejected');
    // Org B: must not be visible to org A.
    for (let i = 0; i < 4; i++) await article(orgB, 'company');
    await article(orgB, 'cash_application');
    await proposal(orgB, 'collections', 'pending');
    await proposal(orgB, 'cash_application', 'pending');

    const res = await stack.request('GET', '/v2/aether/playbook/stats', { token: orgA.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      total_articles: 5,
      total_collections: 2,
      pending_proposals: 4,
      collections: [
        { collection: 'cash_application', article_count: 3, pending_proposal_count: 2 },
        { collection: 'collections', article_count: 0, pending_proposal_count: 0 },
        { collection: 'company', article_count: 0, pending_proposal_count: 0 },
        { collection: 'credit_risk', article_count: 0, pending_proposal_count: 0 },
        { collection: 'deductions', article_count: 2, pending_proposal_count: 0 },
        { collection: 'disputes', article_count: 0, pending_proposal_count: 0 },
        { collection: 'payments', article_count: 0, pending_proposal_count: 1 },
      ],
    });

    const b = await stack.request('GET', '/v2/aether/playbook/stats', { token: orgB.token });
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ total_articles: 5, total_collections: 2, pending_proposals: 2 });
  });

  it('accepts exactly the collections of the enum in the database', async () => {
    const org = await stack.onboard();
    for (const c of COLLECTIONS) await article(org, c);
    await expect(article(org, 'not_a_collection')).rejects.toThrow(/articles_collection_check/);
    await expect(proposal(org, 'not_a_collection', 'pending')).rejects.toThrow(/proposals_collection_check/);

    const res = await stack.request('GET', '/v2/aether/playbook/stats', { token: org.token });
    expect(res.body.total_articles).toBe(COLLECTIONS.length);
    expect(res.body.total_collections).toBe(COLLECTIONS.length);
    expect(res.body.collections.map((c: { article_count: number }) => c.article_count)).toEqual(COLLECTIONS.map(() => 1));
  });

  it('stays correct from the real tables after approvals and rejections through the API', async () => {
    // Proposals come only from the extraction workflow (no endpoint creates one): inserted with SQL;
    // every decision below goes through the gateway.
    const org = await stack.onboard();
    const insert = async (action: string, collection: string, articleId: string | null = null) => {
      const [row] = await stack.sql(
        `INSERT INTO knowledge.proposals (id, organization_id, collection, action, title, content, article_id, article_version)
         VALUES (gen_random_uuid(), $1, $2, $3, 'Proposal', 'Body', $4, $5) RETURNING id`,
        [org.organizationId, collection, action, articleId, articleId ? 1 : null],
      );
      return row.id as string;
    };
    const decide = async (id: string, how: 'approve' | 'reject') => {
      const res = await stack.request('POST', `/v2/aether/playbook/proposals/${id}/${how}`, { token: org.token, body: how === 'reject' ? { review_notes: 'no' } : {} });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    };
    const stats = async () => (await stack.request('GET', '/v2/aether/playbook/stats', { token: org.token })).body;
    const count = (body: { collections: { collection: string; article_count: number; pending_proposal_count: number }[] }, c: string) =>
      body.collections.find((x) => x.collection === c);

    const c1 = await insert('create', 'deductions');
    const c2 = await insert('create', 'deductions');
    const c3 = await insert('create', 'payments');
    const c4 = await insert('create', 'payments');
    expect(await stats()).toMatchObject({ total_articles: 0, total_collections: 0, pending_proposals: 4 });

    const a1 = (await decide(c1, 'approve')).article_id as string;
    await decide(c2, 'approve');
    await decide(c3, 'approve');
    await decide(c4, 'reject');
    let s = await stats();
    expect(s).toMatchObject({ total_articles: 3, total_collections: 2, pending_proposals: 0 });
    expect(count(s, 'deductions')).toEqual({ collection: 'deductions', article_count: 2, pending_proposal_count: 0 });
    expect(count(s, 'payments')).toEqual({ collection: 'payments', article_count: 1, pending_proposal_count: 0 });

    // a revision keeps the count; an archive removes the article from it
    const r = await insert('revise', 'deductions', a1);
    const x = await insert('archive', 'deductions', a1);
    expect(count(await stats(), 'deductions')).toEqual({ collection: 'deductions', article_count: 2, pending_proposal_count: 2 });
    await decide(r, 'approve');
    s = await stats();
    expect(count(s, 'deductions')).toEqual({ collection: 'deductions', article_count: 2, pending_proposal_count: 1 });
    // the archive proposal is now stale (made against version 1): forced
    const archived = await stack.request('POST', `/v2/aether/playbook/proposals/${x}/approve`, { token: org.token, body: { force: true } });
    expect(archived.status).toBe(200);
    s = await stats();
    expect(s).toMatchObject({ total_articles: 2, total_collections: 2, pending_proposals: 0 });
    expect(count(s, 'deductions')).toEqual({ collection: 'deductions', article_count: 1, pending_proposal_count: 0 });
  });

  it('requires a bearer token', async () => {
    const res = await stack.request('GET', '/v2/aether/playbook/stats');
    expect(res.status).toBe(401);
  });
});
