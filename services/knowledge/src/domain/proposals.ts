/**
 * Review of knowledge proposals (spec 2.11, row 12): reads, approval into article versions, rejection.
 *
 * A proposal is decided once: approve or reject of a decided proposal is 409. Approving applies its
 * action in the same transaction as the decision:
 * - create: a new article (version 1) from the proposal; the proposal's `article_id` then names it;
 * - revise: the target article's next version, with the proposal's content (title, description,
 *   type and collection from the proposal where it has them, else kept), scope from the proposal;
 * - archive: the target article is archived; that is a version too (content unchanged), so pending
 *   proposals made against the earlier version become stale.
 * `stale`: the target's version is greater than the one the proposal was made against; approving a
 * stale proposal is 409 unless `force`. The proposal row is locked first, then the target article:
 * two approvals touching one article serialize, the second sees the new version (stale → 409).
 * A target that no longer exists or is archived cannot be revised or archived (409, even with force).
 *
 * `reviewed_by` is the caller's user id from the authenticated identity (never taken from the body).
 *
 * Business units (store/scope.ts): a proposal whose customer, or whose target article's customer, is
 * tied to a unit outside the caller's is absent from lists and 404 by id, for approve and reject too.
 */
import { ConflictError, NotFoundError, ValidationError, type BusinessUnitScope, type Db, type Identity } from '@rp/platform';
import * as articles from '../store/articles.js';
import * as store from '../store/proposals.js';

export async function listProposals({ db }: { db: Db }, org: string, scope: BusinessUnitScope, filters: store.ProposalFilters, offset: number, limit: number) {
  return store.listProposals(db, org, scope, filters, offset, limit);
}

export async function getProposal({ db }: { db: Db }, org: string, scope: BusinessUnitScope, id: string): Promise<store.ProposalRow> {
  const row = await store.getProposal(db, org, id, scope);
  if (!row) throw new NotFoundError(`No knowledge proposal ${id}.`);
  return row;
}

/** Who decides: the caller's user id (API keys: `api_key:<credential id>`). */
export function reviewerOf(identity: Identity): string {
  return identity.sub ?? `${identity.kind}:${identity.cred}`;
}

/** A body's `reviewed_by`, when sent, must be the caller (it is recorded from the credential): 422 otherwise, nothing changed. */
function checkReviewer(identity: Identity, given: string | undefined): void {
  if (given === undefined || given === reviewerOf(identity)) return;
  const msg = `reviewed_by is recorded from your credential (${reviewerOf(identity)}); it cannot name someone else`;
  throw new ValidationError([{ loc: ['body', 'reviewed_by'], msg, type: 'value_error' }]);
}

function undecided(p: { id: string; status: string }): void {
  if (p.status !== 'pending') throw new ConflictError(`Knowledge proposal ${p.id} was already ${p.status}; a proposal is decided once.`);
}

export async function approveProposal({ db }: { db: Db }, identity: Identity, id: string, opts: { force: boolean; review_notes: string | null; reviewed_by?: string }) {
  checkReviewer(identity, opts.reviewed_by);
  const org = identity.org;
  const reviewer = reviewerOf(identity);
  await db.transaction(async (trx) => {
    const p = await store.lockProposal(trx, org, id, identity.bu);
    if (!p) throw new NotFoundError(`No knowledge proposal ${id}.`);
    undecided(p);
    const excerpts = { source_excerpts: p.source_excerpts, proposal_id: p.id, created_by: reviewer };

    if (p.action === 'create') {
      if (!p.collection) throw new ConflictError(`Knowledge proposal ${id} names no collection; an article cannot be created from it.`);
      const created = await articles.insertArticle(trx, org, {
        collection: p.collection,
        title: p.title ?? '',
        description: p.description,
        content: p.content ?? '',
        knowledge_type: p.knowledge_type,
        customer_id: p.customer_id,
        segment_id: p.segment_id,
      });
      await articles.insertVersion(trx, org, created, { action: 'create', ...excerpts });
      await store.recordDecision(trx, org, id, { status: 'approved', review_notes: opts.review_notes, reviewed_by: reviewer, article_id: created.id });
      return;
    }

    if (!p.article_id) throw new ConflictError(`The target article of knowledge proposal ${id} no longer exists.`);
    const a = await articles.lockArticle(trx, org, p.article_id);
    if (!a) throw new ConflictError(`The target article of knowledge proposal ${id} no longer exists.`);
    // locked now: its customer cannot change any more; out of the caller's units, the proposal is hidden with it
    if (identity.bu !== '*' && !(await articles.getArticle(trx, org, a.id, identity.bu))) throw new NotFoundError(`No knowledge proposal ${id}.`);
    if (a.archived_at) throw new ConflictError(`The target article ${a.id} is archived; it cannot be ${p.action === 'archive' ? 'archived again' : 'revised'}.`);
    if (p.article_version !== null && a.version > p.article_version && !opts.force) {
      throw new ConflictError(
        `Knowledge proposal ${id} is stale: it was made against version ${p.article_version} of article ${a.id}, which is now at version ${a.version}. ` +
          'Review the article and approve with {"force": true} to apply it anyway.',
      );
    }
    const next: articles.ArticleState =
      p.action === 'revise'
        ? {
            collection: p.collection ?? a.collection,
            title: p.title ?? a.title,
            description: p.description ?? a.description,
            content: p.content ?? a.content,
            knowledge_type: p.knowledge_type ?? a.knowledge_type,
            customer_id: p.customer_id,
            segment_id: p.segment_id,
          }
        : { collection: a.collection, title: a.title, description: a.description, content: a.content, knowledge_type: a.knowledge_type, customer_id: a.customer_id, segment_id: a.segment_id };
    const updated = await articles.updateArticle(trx, org, a.id, next, p.action === 'archive');
    await articles.insertVersion(trx, org, updated, { action: p.action, ...excerpts });
    await store.recordDecision(trx, org, id, { status: 'approved', review_notes: opts.review_notes, reviewed_by: reviewer });
  });
  return getProposal({ db }, org, identity.bu, id);
}

export async function rejectProposal({ db }: { db: Db }, identity: Identity, id: string, reviewNotes: string, reviewedBy?: string) {
  checkReviewer(identity, reviewedBy);
  const org = identity.org;
  await db.transaction(async (trx) => {
    const p = await store.lockProposal(trx, org, id, identity.bu);
    if (!p) throw new NotFoundError(`No knowledge proposal ${id}.`);
    undecided(p);
    await store.recordDecision(trx, org, id, { status: 'rejected', review_notes: reviewNotes, reviewed_by: reviewerOf(identity) });
  });
  return getProposal({ db }, org, identity.bu, id);
}
