/**
 * The partners API (spec 2.13) over integrations' ledger: list, read and assign partners.
 */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, partnerSummarySchema } from '@rp/platform';
import { route } from '../deps.js';
import { assignPartner, listPartners, partnerDetail } from '../domain/partners.js';

const MAX_PAGE = 500;

const EFFECTIVE =
  'the user handling this customer today: `assignee_id`, or the backup of an out-of-office assignee (OOO in force today in the organization timezone, spec 2.6); null when nobody is assigned';

export const listedPartnerSchema = partnerSummarySchema
  .extend({ effective_assignee_id: z.string().nullable().describe(EFFECTIVE) })
  .meta({ id: 'ListedPartner' });

const partnerSchema = listedPartnerSchema
  .extend({
    open_invoice_count: z.number().int(),
    total_open_lc: z.string().describe('open invoices, base currency (decimal string)'),
    overdue_lc: z.string().describe('open invoices past net due date as of today (organization timezone), base currency'),
    max_days_overdue: z.number().int().describe('days past due of the oldest overdue open invoice; 0 when none'),
    tags: z.array(z.object({ id: z.string(), name: z.string(), color: z.string() })).describe('tags carried: by hand or by rule'),
  })
  .meta({ id: 'Partner' });

const AMOUNTS =
  'Amounts are in the organization base currency: an open invoice counts with its local-currency amount, or with its open amount when it is in the base currency; ' +
  'an invoice in another currency without a local amount is in no sum (integrations holds no exchange rates).';

export const partnerRoutes = [
  route({
    method: 'get',
    path: '/v2/partners',
    operationId: 'listPartners',
    summary: 'List partners (customers)',
    description:
      'Partner summaries (spec 2.13) by name then id, in the caller\'s business units (members) or all (admins). Filters (all must hold): ' +
      '`name` (contains, case-insensitive), `business_unit_id`, `assignee_id` (the assignee as set, literal), ' +
      '`handled_by` (a user id: customers whose effective assignee today is this user, i.e. assigned to them while they are not out of office, ' +
      'or assigned to a user they cover today; an id that is no user of the organization matches none), `tag` (a tag id: tagged by hand or matched by its rule), ' +
      '`segment_id` (the segment\'s conditions). Tags and segments belong to the admin service; they are read through the kernel ' +
      'read module and evaluated with the ledger in one SQL statement. An unknown tag or segment: 422. Paginated (page, page_size 1..500). ' +
      'Each partner carries `assignee_id` as set and `effective_assignee_id`: the assignee, or the assignee\'s backup while the assignee is out of office today ' +
      '(organization timezone; admin\'s out-of-office coverage read through the kernel).',
    tags: ['Partners'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      name: z.string().min(1).max(256).optional(),
      tag: idSchema().optional(),
      segment_id: idSchema().optional(),
      business_unit_id: idSchema().optional(),
      assignee_id: idSchema().optional(),
      handled_by: idSchema().optional(),
    }),
    response: pageEnvelopeSchema(listedPartnerSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await listPartners(deps, identity, query, page);
      return pageOf(rows, total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/partners/{partner_id}',
    operationId: 'getPartner',
    summary: 'Get a partner',
    description: `Spec 2.13 fields plus \`effective_assignee_id\` (the assignee, or the assignee's backup while the assignee is out of office today, organization timezone), open/overdue figures (the condition language's fields, as of today in the organization timezone) and its tags. ${AMOUNTS} A partner outside the caller's units: 404. ` +
      'The answer may come from a short-lived cache of the answering process (per organization, partner and the caller\'s business units): every committed change to the partner, ' +
      'its documents, the organization (timezone, base currency), its tags or their partners, or out-of-office coverage drops it in every process as the change commits ' +
      '(announced by the database, whoever makes the change; typically within a millisecond), and the process that answered a write of this service has dropped it before that answer; an entry lives at most 5 seconds (the default of PARTNER_READ_CACHE_TTL_MS), which bounds ' +
      'what changes with time alone (the overdue figures and the coverage in force move with the organization\'s day).',
    tags: ['Partners'],
    params: z.object({ partner_id: idSchema() }),
    response: partnerSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => partnerDetail(deps, identity, params.partner_id),
  }),
  route({
    method: 'patch',
    path: '/v2/partners/{partner_id}',
    operationId: 'updatePartner',
    summary: 'Assign a partner',
    description:
      'Only the fields sent change; null clears. `assignee_id` must be an active user of the organization, `business_unit_id` a unit of it ' +
      '(for a member: one of theirs); otherwise 422 naming the field. Later middleware pushes keep both. Answers the partner as GET does. ' +
      'A change records `partner.updated` (with `previous_attributes`); sending the values the partner already has records nothing.',
    tags: ['Partners'],
    params: z.object({ partner_id: idSchema() }),
    body: z.object({ assignee_id: idSchema().nullable().optional(), business_unit_id: idSchema().nullable().optional() }),
    response: partnerSchema,
    errors: [404],
    handler: async ({ params, body, identity, deps }) => assignPartner(deps, identity, params.partner_id, body),
  }),
];
