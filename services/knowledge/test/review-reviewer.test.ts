/**
 * The reviewer of a proposal comes from the credential (spec 2.11): a body's `reviewed_by`, when
 * sent, must be the caller's user id; naming anyone else is 422 at `body.reviewed_by` with nothing
 * changed. Proposals are made only by an extraction run, so the set-up inserts a pending one with SQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from '../../../test/support/stack.js';

let stack: TestStack;
let org: Org;

async function pendingProposal(): Promise<string> {
  const [row] = await stack.sql<{ id: string }>(
    `INSERT INTO knowledge.proposals (id, organization_id, collection, status, action, title, content)
     VALUES (gen_random_uuid(), $1, 'payments', 'pending', 'create', 'Proposal', 'Body') RETURNING id`,
    [org.organizationId],
  );
  return row!.id;
}

beforeAll(async () => {
  stack = await startStack();
  org = await stack.onboard('Reviewer Org');
});
afterAll(async () => stack?.close());

describe('reviewed_by on approve and reject', () => {
  it.each([
    ['approve', {}],
    ['reject', { review_notes: 'not ours' }],
  ])('%s naming someone else is 422 at body.reviewed_by and leaves the proposal pending', async (decision, body) => {
    const id = await pendingProposal();
    const res = await stack.request('POST', `/v2/aether/playbook/proposals/${id}/${decision}`, { token: org.token, body: { ...body, reviewed_by: 'someone-else' } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ loc: ['body', 'reviewed_by'], type: 'value_error' })]);
    const after = await stack.request('GET', `/v2/aether/playbook/proposals/${id}`, { token: org.token });
    expect(after.body).toMatchObject({ status: 'pending', reviewed_by: null, reviewed_at: null });
  });

  it('approve naming the caller records the caller', async () => {
    const id = await pendingProposal();
    const res = await stack.request('POST', `/v2/aether/playbook/proposals/${id}/approve`, { token: org.token, body: { reviewed_by: org.userId } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'approved', reviewed_by: org.userId });
  });
});
