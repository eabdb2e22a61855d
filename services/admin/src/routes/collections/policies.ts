/** Routes of collection policies: which customers get which chasing steps (v2). */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, timestampsShape } from '@rp/platform';
import { route } from '../../deps.js';
import { createPolicy, patchPolicy, policiesOf, policyOrThrow, removePolicy } from '../../domain/collections/policies.js';
import { policyView } from '../../views/collections/policies.js';

const MAX_PAGE = 500;
const MAX_STEPS = 12;
const ADMIN_ONLY = 'Organization admins only (members: 403).';
const AMOUNT_RE = /^\d{1,18}(\.\d{1,2})?$/;

const CHANNEL = z.enum(['email', 'sms', 'task']).describe('`email` sends the step\'s email template, `sms` its SMS template to the customer\'s phone, `task` creates a follow-up task for the sender.');
const OFFSET = z
  .number()
  .int()
  .min(-60)
  .max(365)
  .describe(
    'Days relative to each invoice\'s `net_due_date` (-60..365): the step is due for an invoice once the run\'s date (organization timezone) is on or after net_due_date + offset_days. ' +
      'Negative: a reminder before the due date (not sent once the invoice is past due). Unique within a policy.',
  );
const MIN_OVERDUE = z
  .union([z.string().max(24), z.number()])
  .transform((v) => (typeof v === 'number' ? String(v) : v.trim()))
  .refine((v) => AMOUNT_RE.test(v), 'must be a non-negative amount with at most 2 decimals, e.g. "500.00"')
  .nullable()
  .describe(
    'Optional threshold in the organization\'s base (local) currency, at most 2 decimals, ≥ 0 (a decimal string of at most 24 characters, or a number): ' +
      'a customer whose overdue total in local currency is below it is skipped at this step (`below_min_overdue`). null or absent: no threshold.',
  );
const TEMPLATE_ID = idSchema();

const stepInput = z
  .object({
    offset_days: OFFSET,
    channel: CHANNEL,
    email_template_id: TEMPLATE_ID.nullable().optional().describe('Required for (and only for) an `email` step: an email template of this organization (422 at this loc otherwise).'),
    sms_template_id: TEMPLATE_ID.nullable().optional().describe('Required for (and only for) an `sms` step: an SMS template of this organization (422 at this loc otherwise).'),
    min_overdue_lc: MIN_OVERDUE.optional(),
  })
  .superRefine((s, ctx) => {
    for (const [field, channel] of [['email_template_id', 'email'], ['sms_template_id', 'sms']] as const) {
      if (s.channel === channel && !s[field]) ctx.addIssue({ code: 'custom', path: [field], message: `is required for an ${channel} step` });
      if (s.channel !== channel && s[field]) ctx.addIssue({ code: 'custom', path: [field], message: `is only for ${channel} steps; omit it (or send null) for a ${s.channel} step` });
    }
  })
  .transform((s) => ({
    offset_days: s.offset_days,
    channel: s.channel,
    email_template_id: s.email_template_id ?? null,
    sms_template_id: s.sms_template_id ?? null,
    min_overdue_lc: s.min_overdue_lc ?? null,
  }));

const stepsInput = z
  .array(stepInput)
  .min(1)
  .max(MAX_STEPS)
  .superRefine((steps, ctx) => {
    const seen = new Map<number, number>();
    steps.forEach((s, i) => {
      const first = seen.get(s.offset_days);
      if (first !== undefined) ctx.addIssue({ code: 'custom', path: [i, 'offset_days'], message: `duplicates the offset of step ${first}; offsets are unique within a policy` });
      else seen.set(s.offset_days, i);
    });
  })
  .describe(`1..${MAX_STEPS} steps, in any order: they are stored and answered sorted by offset_days.`);

const NAME = z.string().trim().min(1).max(256).describe('1..256 characters (trimmed).');
const DESCRIPTION = z.string().max(2000).nullable().describe('At most 2000 characters; null: none.');
const SEGMENT_ID = idSchema()
  .nullable()
  .describe(
    'The customer segment whose customers this policy chases (422 at this loc when not a segment of this organization; a segment has at most one policy, 409). ' +
      'null: the organization\'s default policy (at most one, 409), for customers in no segment that has an enabled policy.',
  );
const IS_ENABLED = z.boolean().describe('A disabled policy chases nobody: its customers fall through to the next rule (see the resolution on the create operation).');

const stepSchema = z
  .object({
    step_index: z.number().int().describe('0-based position in offset order.'),
    offset_days: z.number().int(),
    channel: z.enum(['email', 'sms', 'task']),
    email_template_id: z.string().nullable(),
    sms_template_id: z.string().nullable(),
    min_overdue_lc: z.string().nullable().describe('2 decimals, local currency; null: no threshold.'),
  })
  .meta({ id: 'CollectionPolicyStep' });

export const policySchema = z
  .object({
    object: z.literal('collection_policy'),
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    segment_id: z.string().nullable().describe('null: the organization\'s default policy.'),
    is_enabled: z.boolean(),
    steps: z.array(stepSchema).describe('Sorted by offset_days.'),
    ...timestampsShape,
  })
  .meta({ id: 'CollectionPolicy' });

const RESOLUTION_DOC =
  'Which policy chases a customer: the customer\'s highest-priority segment (priority 1 highest, segment membership as GET /v2/customer-segments/{id}/partners computes it) that has an ENABLED policy; ' +
  'else the enabled default policy (segment_id null); else none. ' +
  'The organization\'s daily run (a Temporal Schedule at `collections_run_time`, PATCH /v2/organization) runs while at least one policy is enabled, is paused while all are disabled, and is removed with the last policy.';

const STEPS_DOC =
  'An invoice is due for step k on the run\'s date when date ≥ net_due_date + offset_days(k) and neither step k nor a later step has been done for it under this policy; each run acts on the lowest due step. ' +
  'Due invoices of one customer at one step are grouped into one email, SMS or task.';

export const policyRoutes = [
  route({
    method: 'post',
    path: '/v2/collection-policies',
    operationId: 'createCollectionPolicy',
    summary: 'Create a collection policy',
    description: `${ADMIN_ONLY} ${RESOLUTION_DOC} ${STEPS_DOC}`,
    tags: ['Collections'],
    auth: { role: 'admin' },
    body: z.object({ name: NAME, description: DESCRIPTION.optional(), segment_id: SEGMENT_ID, is_enabled: IS_ENABLED, steps: stepsInput }),
    response: policySchema,
    errors: [409],
    handler: async ({ body, identity, deps, log }) => policyView(await createPolicy({ ...deps, log }, identity, body)),
  }),
  route({
    method: 'get',
    path: '/v2/collection-policies',
    operationId: 'listCollectionPolicies',
    summary: 'List collection policies',
    description: 'Oldest first. Paginated: `page` (0-based), `page_size` 1..500. Members may read.',
    tags: ['Collections'],
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(policySchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await policiesOf(deps, identity.org, page);
      return pageOf(rows.map(policyView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/collection-policies/{policy_id}',
    operationId: 'getCollectionPolicy',
    summary: 'Get a collection policy',
    tags: ['Collections'],
    params: z.object({ policy_id: idSchema() }),
    response: policySchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => policyView(await policyOrThrow(deps, identity, params.policy_id)),
  }),
  route({
    method: 'patch',
    path: '/v2/collection-policies/{policy_id}',
    operationId: 'updateCollectionPolicy',
    summary: 'Update a collection policy',
    description:
      `${ADMIN_ONLY} Only the fields sent change; at least one is required. \`steps\`, when given, replaces the steps wholesale (validated as on create). ` +
      'Each invoice\'s progress is kept per step offset: a step kept at the same offset_days is not repeated for invoices that already had it, and an invoice already past a kept offset is not chased again at an earlier new one; a step at a new offset is a new step. ' +
      'Moving the policy to a segment (or to default) that already has one: 409. The daily Schedule follows is_enabled.',
    tags: ['Collections'],
    auth: { role: 'admin' },
    params: z.object({ policy_id: idSchema() }),
    body: z
      .object({ name: NAME.optional(), description: DESCRIPTION.optional(), segment_id: SEGMENT_ID.optional(), is_enabled: IS_ENABLED.optional(), steps: stepsInput.optional() })
      .refine((b) => Object.values(b).some((v) => v !== undefined), 'give at least one field to change'),
    response: policySchema,
    errors: [404, 409],
    handler: async ({ params, body, identity, deps, log }) => policyView(await patchPolicy({ ...deps, log }, identity, params.policy_id, body)),
  }),
  route({
    method: 'delete',
    path: '/v2/collection-policies/{policy_id}',
    operationId: 'deleteCollectionPolicy',
    summary: 'Delete a collection policy',
    description:
      `${ADMIN_ONLY} Permanent; 204 with no body; 404 when unknown. Its history stays: the actions it planned and sent keep their record with \`policy_id\` null, ` +
      'while its per-invoice progress goes with it (a policy created later starts every invoice from its first due step). ' +
      'Its customers fall through to the next policy that applies from the next run on. Deleting the last policy removes the daily Schedule.',
    tags: ['Collections'],
    auth: { role: 'admin' },
    params: z.object({ policy_id: idSchema() }),
    errors: [404],
    handler: async ({ params, identity, deps, log }) => removePolicy({ ...deps, log }, identity, params.policy_id),
  }),
];
