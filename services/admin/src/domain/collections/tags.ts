/**
 * Tags: CRUD over admin's store, hand-tagging of partners (references checked against the ledger
 * through the kernel read module), and the partners a tag covers (hand-tagged OR rule), one statement.
 */
import {
  checkConditionReferences,
  ConflictError,
  MAX_COMPILED_NODES,
  tagIdsOf,
  getPartners,
  listPartnersMatching,
  NotFoundError,
  partnerSummaryView,
  ValidationError,
  type Condition,
  type Db,
  type Identity,
} from '@rp/platform';
import { addTagPartners, deleteTag, getTag, insertTag, listTags, removeTagPartners, updateTag, type TagRow } from '../../store/collections/tags.js';
import { segmentConditionsOfOrganization } from '../../store/collections/segments.js';
import { nameKey } from './names.js';
import { organizationSegmentSizes } from './segments.js';

const duplicate = (name: string) =>
  new ConflictError(`A tag named "${name}" (or a name that differs only in case, width or invisible characters) already exists in this organization.`);

/**
 * A new rule of tag `id` may not grow the segments that use the tag past the compiled-size bound
 * (segments.ts): 422 at `rule_condition` naming those segments, rather than a later 409 at every read.
 */
async function checkSegmentsWithRule(db: Db, organizationId: string, id: string, rule: Condition | null): Promise<void> {
  const sizes = await organizationSegmentSizes(db, organizationId, { tagRules: new Map([[id.toLowerCase(), rule]]) });
  if (sizes.total <= MAX_COMPILED_NODES) return;
  const users = (await segmentConditionsOfOrganization(db, organizationId)).filter((s) => tagIdsOf(s.conditions).includes(id.toLowerCase()));
  const names = users.slice(0, 5).map((s) => `"${s.name}"`).join(', ') + (users.length > 5 ? ` and ${users.length - 5} more` : '');
  throw new ValidationError([
    {
      loc: ['body', 'rule_condition'],
      msg: `with this rule the customer segments using the tag (${names}) would expand to ${sizes.total} nodes, more than the ${MAX_COMPILED_NODES} a segment query may compile`,
      type: 'value_error.condition_size',
    },
  ]);
}

export async function createTag({ db }: { db: Db }, identity: Identity, body: { name: string; color: string; rule_condition?: Record<string, unknown> | null }) {
  const rule = (body.rule_condition ?? null) as Condition | null;
  if (rule) await checkConditionReferences(db, identity.org, rule, ['body', 'rule_condition']);
  const row = await insertTag(db, identity.org, { name: body.name, name_key: nameKey(body.name), color: body.color, rule_condition: rule });
  if (!row) throw duplicate(body.name);
  return row;
}

/** A page of the organization's tags, by name. */
export async function tagsOf({ db }: { db: Db }, organizationId: string, page: { offset: number; pageSize: number }) {
  return listTags(db, organizationId, page.offset, page.pageSize);
}

export async function tagOrThrow({ db }: { db: Db }, identity: Identity, id: string): Promise<TagRow> {
  const row = await getTag(db, identity.org, id);
  if (!row) throw new NotFoundError(`No tag ${id}.`);
  return row;
}

export async function patchTag({ db }: { db: Db }, identity: Identity, id: string, body: { name?: string; color?: string; rule_condition?: Record<string, unknown> | null }) {
  const rule = body.rule_condition as Condition | null | undefined;
  if (rule !== undefined) {
    await tagOrThrow({ db }, identity, id);
    if (rule) await checkConditionReferences(db, identity.org, rule, ['body', 'rule_condition']);
    await checkSegmentsWithRule(db, identity.org, id, rule);
  }
  const row = await updateTag(db, identity.org, id, { ...body, name_key: body.name === undefined ? undefined : nameKey(body.name), rule_condition: rule });
  if (row === 'conflict') throw duplicate(body.name!);
  if (!row) throw new NotFoundError(`No tag ${id}.`);
  return row;
}

export async function removeTag({ db }: { db: Db }, identity: Identity, id: string): Promise<void> {
  if (!(await deleteTag(db, identity.org, id))) throw new NotFoundError(`No tag ${id}.`);
}

/** 422 naming each index of `ids` that is not a partner of the organization within the caller's units. */
async function checkPartners(db: Db, identity: Identity, ids: readonly string[], loc: (string | number)[]) {
  const found = await getPartners(db, identity.org, ids, identity.bu);
  const issues = ids.flatMap((id, i) => (found.has(id.toLowerCase()) || found.has(id) ? [] : [{ loc: [...loc, i], msg: 'is not a partner of this organization', type: 'value_error.not_found' }]));
  if (issues.length) throw new ValidationError(issues);
}

export async function tagPartnersByHand({ db }: { db: Db }, identity: Identity, id: string, partnerIds: string[]): Promise<void> {
  await tagOrThrow({ db }, identity, id);
  await checkPartners(db, identity, partnerIds, ['body', 'partner_ids']);
  await addTagPartners(db, identity.org, id, partnerIds.map((p) => p.toLowerCase()));
}

export async function untagPartners({ db }: { db: Db }, identity: Identity, id: string, partnerIds: string[]): Promise<void> {
  await tagOrThrow({ db }, identity, id);
  await checkPartners(db, identity, partnerIds, ['query', 'partner_ids']);
  await removeTagPartners(db, identity.org, id, partnerIds.map((p) => p.toLowerCase()));
}

export async function tagPartners({ db }: { db: Db }, identity: Identity, id: string, page: { offset: number; pageSize: number }) {
  await tagOrThrow({ db }, identity, id);
  const { rows, total } = await listPartnersMatching(db, identity.org, {
    condition: { field: 'tag', op: 'eq', value: id },
    scope: identity.bu,
    offset: page.offset,
    limit: page.pageSize,
    withTotal: true,
  });
  return { rows: rows.map(partnerSummaryView), total };
}
