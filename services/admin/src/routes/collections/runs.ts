/** Routes of collection runs and their actions (issue: collections engine §2). v2. */
import { z } from 'zod';
import { idSchema, isoDate, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../../deps.js';
import { collectionActionsOf, collectionRunOrThrow, collectionRunsOf, DRY_RUN_WINDOW_DAYS, startCollectionRun } from '../../domain/collections/runs.js';
import { collectionActionView, collectionRunView } from '../../views/collections/runs.js';

const MAX_PAGE = 500;

export const collectionRunSchema = z
  .object({
    object: z.literal('collection_run'),
    id: z.string(),
    as_of_date: z.string().describe('The date (YYYY-MM-DD, the organization\'s timezone) the run evaluates invoices as of.'),
    dry_run: z.boolean().describe('A dry run plans only: its actions stay `planned` and take no step marks (a forecast).'),
    trigger: z.enum(['schedule', 'api']).describe('`schedule`: the daily Schedule; `api`: POST /v2/collections/runs.'),
    status: z.enum(['running', 'completed', 'failed']),
    error: z.string().nullable().describe('Why a failed run failed, written for users.'),
    started_at: z.string(),
    completed_at: z.string().nullable(),
    planned: z.number().int().describe('Actions the run planned to do (every action not skipped, whatever became of it).'),
    sent: z.number().int().describe('Actions done: email or SMS accepted by the transport, task created.'),
    skipped: z.number().int().describe('Actions skipped (see `skip_reason` of each).'),
    failed: z.number().int().describe('Actions that failed (their step marks are released: the next run retries them).'),
  })
  .meta({ id: 'CollectionRun' });

export const collectionActionSchema = z
  .object({
    object: z.literal('collection_action'),
    id: z.string(),
    run_id: z.string(),
    partner_id: z.string(),
    policy_id: z.string().nullable().describe('Null once the policy was deleted.'),
    step_index: z.number().int().describe('0-based index of the step in its policy (steps by offset).'),
    offset_days: z.number().int().describe('The step\'s offset from each invoice\'s net due date; identifies the step across edits of the policy.'),
    channel: z.enum(['email', 'sms', 'task']),
    invoice_ids: z.array(z.string()).describe('The invoices this one action chases (all of the customer\'s invoices due for this step, invoices on hold left out).'),
    status: z.enum(['planned', 'sent', 'skipped', 'failed']),
    skip_reason: z
      .enum(['below_min_overdue', 'no_email_address', 'email_bouncing', 'no_phone_number', 'all_invoices_on_hold'])
      .nullable()
      .describe(
        'Checked in this order: every due invoice disputed or under an open promise; the customer\'s overdue total in local currency below the step\'s `min_overdue_lc`; no email address / ' +
          '`email_bouncing`: every address of the customer\'s email bounced (the inbox received a failed delivery-status notification for it; the customer\'s email has to change for chasing by email to resume) / ' +
          'no E.164 phone number for the channel. A skipped action is re-evaluated by the next run.',
      ),
    sender_user_id: z.string().nullable().describe('The customer\'s assignee; while the assignee is out of office on the run\'s date, the covering backup; else the organization\'s default sender (its earliest-created active admin).'),
    email_id: z.string().nullable(),
    sms_id: z.string().nullable(),
    task_id: z.string().nullable(),
    sent_at: z.string().nullable(),
    error: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'CollectionAction' });

const RUN_DOC =
  'Starts a collection run now and answers 202 with it (`status: running`); poll GET /v2/collections/runs/{run_id}. ' +
  'A real run is always as of today in the organization\'s timezone (`as_of_date` other than today: 422); a dry run may take any `as_of_date` ' +
  `within ${DRY_RUN_WINDOW_DAYS} days of today and plans what would go out on that date without sending or recording anything as done. ` +
  'Per open invoice with a net due date of every customer with a policy (the customer\'s highest-priority segment, 1 first, with an enabled policy; else the enabled default policy): ' +
  'the LOWEST step k with `as_of_date ≥ net_due_date + offset_days(k)` that neither k nor a later step was done for is due (one step per invoice per run, so chasing paused by a promise or dispute resumes where it was); ' +
  'a reminder step (negative offset) is not due once the invoice is past due; an invoice a run of the same date acted on waits for the next day (a re-run of the day never chases it again). The due invoices of a customer at one step make ONE action (one email, SMS or task). ' +
  'Exactly once: an (invoice, policy step) is acted on at most once whatever retries, crashes, re-runs or simultaneous runs happen (a real run takes each invoice\'s step mark with its action; a failed action releases them). ' +
  'Emails go from the sender\'s name at the platform\'s address with Reply-To `ar@<the organization\'s inbound hostname>`; SMS wait for the end of quiet hours (20:00–08:00 local).';

export const collectionRunRoutes = [
  route({
    method: 'post',
    path: '/v2/collections/runs',
    operationId: 'startCollectionRun',
    summary: 'Start a collection run now',
    description: `Organization admins only (members: 403). ${RUN_DOC}`,
    tags: ['Collections'],
    auth: { role: 'admin' },
    status: 202,
    body: z.object({
      dry_run: z.boolean().optional().describe('Default false.'),
      as_of_date: isoDate().optional().describe(`Default today (organization's timezone). A real run: today only. A dry run: within ${DRY_RUN_WINDOW_DAYS} days of today.`),
    }),
    response: collectionRunSchema,
    handler: async ({ body, identity, deps }) => collectionRunView(await startCollectionRun(deps, identity, body)),
  }),
  route({
    method: 'get',
    path: '/v2/collections/runs',
    operationId: 'listCollectionRuns',
    summary: 'List collection runs',
    description: 'Newest first. Paginated: `page` (0-based), `page_size` 1..500. Counters are counted from the run\'s actions.',
    tags: ['Collections'],
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(collectionRunSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await collectionRunsOf(deps, identity.org, page);
      return pageOf(rows.map(collectionRunView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/collections/runs/{run_id}',
    operationId: 'getCollectionRun',
    summary: 'Get a collection run',
    tags: ['Collections'],
    params: z.object({ run_id: idSchema() }),
    response: collectionRunSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => collectionRunView(await collectionRunOrThrow(deps, identity.org, params.run_id)),
  }),
  route({
    method: 'get',
    path: '/v2/collections/actions',
    operationId: 'listCollectionActions',
    summary: 'List collection actions',
    description:
      'Newest first. Paginated: `page` (0-based), `page_size` 1..500. Filters combine with AND. Members see only actions of customers of their business units or of none. ' +
      '`email_id`/`sms_id` name the recorded message of the action, `task_id` the task it created.',
    tags: ['Collections'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      run_id: idSchema().optional(),
      partner_id: idSchema().optional(),
      policy_id: idSchema().optional(),
      status: z.enum(['planned', 'sent', 'skipped', 'failed']).optional(),
      channel: z.enum(['email', 'sms', 'task']).optional(),
    }),
    response: pageEnvelopeSchema(collectionActionSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { run_id, partner_id, policy_id, status, channel } = query;
      const { rows, total } = await collectionActionsOf(deps, identity, { run_id, partner_id, policy_id, status, channel }, page);
      return pageOf(rows.map(collectionActionView), total, page);
    },
  }),
];
