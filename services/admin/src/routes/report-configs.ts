/** Routes of report configs (spec 2.3) and their runs: CRUD, send now, list runs. v2. */
import { z } from 'zod';
import { emailSchema, idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, timestampsShape } from '@rp/platform';
import { REPORT_TYPES } from '@rp/workflows';
import { route } from '../deps.js';
import { changeReportConfig, createReportConfig, MAX_RECIPIENTS, removeReportConfig, reportConfigOrThrow, reportConfigsOf, reportRunsOf, sendReportNow } from '../domain/report-configs.js';
import { REPORT_CATCHUP_WINDOW } from '../domain/report-schedules.js';
import { reportConfigView, reportRunView } from '../views/report-configs.js';

const MAX_PAGE = 200;
const FREQUENCIES = ['daily', 'weekly', 'monthly'] as const;

const TIME = z
  .string()
  .max(5)
  .regex(/^([01][0-9]|2[0-3]):(00|30)$/, 'must be a time HH:MM (24-hour) whose minutes are 00 or 30')
  .describe(
    'Time of day in the organization\'s timezone, HH:MM (24-hour, 5 characters); minutes 00 or 30. On daylight-saving days exactly one ' +
      'report per local period is sent: a time in the repeated hour runs once, a time in the skipped hour runs at the first valid minute after it.',
  );
const WEEKDAY = z.number().int().min(0).max(6).describe('0 = Monday … 6 = Sunday. Required for weekly; refused (422) for daily and monthly.');
const RECIPIENTS = z.array(emailSchema()).min(1, 'at least one recipient is required').max(MAX_RECIPIENTS).describe('Primary recipients (1..50).');
const CC = z.array(emailSchema()).max(MAX_RECIPIENTS).describe(`Copies; recipients and cc together at most ${MAX_RECIPIENTS}.`);

export const reportConfigSchema = z
  .object({
    object: z.literal('report_config'),
    id: z.string(),
    report_type: z.enum(REPORT_TYPES),
    is_enabled: z.boolean().describe('false pauses the config\'s Temporal Schedule (nothing is sent until enabled again).'),
    frequency: z.enum(FREQUENCIES),
    time: z.string().describe('HH:MM in the organization\'s timezone (minutes 00 or 30).'),
    weekday: z.number().int().nullable().describe('0 = Monday … 6 = Sunday (weekly only; null otherwise).'),
    recipient_emails: z.array(z.string()),
    cc_emails: z.array(z.string()),
    last_sent_at: z.string().nullable().describe('UTC time of the last successful send; set by the platform only (not writable).'),
    ...timestampsShape,
  })
  .meta({ id: 'ReportConfig' });

export const reportRunSchema = z
  .object({
    object: z.literal('report_run'),
    id: z.string(),
    config_id: z.string(),
    report_type: z.enum(REPORT_TYPES),
    trigger: z.enum(['schedule', 'manual']).describe('`schedule`: an action of the config\'s Schedule; `manual`: POST …/send.'),
    scheduled_for: z.string().describe('The Schedule\'s scheduled time of the run (UTC), or the time send-now was requested.'),
    status: z.enum(['running', 'sent', 'failed']),
    as_of_date: z.string().nullable().describe('Report date (YYYY-MM-DD): `scheduled_for` in the organization\'s timezone.'),
    period_start: z.string().nullable().describe('Start of the period reported (previous local day, 7 days or calendar month), UTC.'),
    period_end: z.string().nullable().describe('End of the period (exclusive), UTC.'),
    row_count: z.number().int().nullable().describe('Data rows in the attached files.'),
    counts: z.record(z.string(), z.number()).describe('Totals recorded by the report build (e.g. customers, failed runs).'),
    files: z
      .array(z.object({ filename: z.string(), size: z.number().int(), mode: z.enum(['attached', 'linked']), link_expires_at: z.string().optional() }))
      .describe('The XLSX and CSV: attached, or linked with a presigned URL (and its expiry) when over 10 MB.'),
    sent_at: z.string().nullable(),
    error: z.string().nullable().describe('Why the run failed, in words for users.'),
    ...timestampsShape,
  })
  .meta({ id: 'ReportRun' });

const params = z.object({ report_config_id: idSchema() });
const ADMIN_ONLY = 'Organization admins only (members: 403).';
const RULES =
  'Rules, each a 422 `request-validation` naming its field: `report_type` `integration_sync_report` | `ar_aging_report`; ' +
  '`frequency` `daily` | `weekly` | `monthly`; `time` HH:MM with minutes 00 or 30; `weekday` 0..6 (0 = Monday) required for ' +
  `weekly and refused otherwise; at least one valid \`recipient_emails\`, at most ${MAX_RECIPIENTS} recipients and cc together ` +
  '(`cc_emails`); unknown fields (such as `last_sent_at`, which only the platform sets) are refused.';
const SCHEDULE =
  'Each config is the Temporal Schedule `report-<organization id>-<report type>`: a calendar at `time` in the organization\'s ' +
  'IANA timezone (daylight-saving changes keep the local time; one run per local report date, so a time the clocks pass twice ' +
  'sends once and a time they skip runs at the first valid minute after the gap) — daily; weekly on `weekday`; monthly on the first day of the ' +
  `month — overlap policy skip, catch-up window ${REPORT_CATCHUP_WINDOW} (a shorter outage still sends the missed run, a longer ` +
  'one skips it), paused while `is_enabled` is false. The Schedule is written in the same transaction as the config: if ' +
  'Temporal is unavailable, nothing changes (503).';

export const reportConfigRoutes = [
  route({
    method: 'post',
    path: '/v2/report-configs',
    operationId: 'createReportConfig',
    summary: 'Create a report config',
    description:
      `Spec row 3. ${ADMIN_ONLY} ${RULES} \`cc_emails\` defaults to [], \`is_enabled\` to true. A second config of the same ` +
      `report type in the organization: 409 \`conflict\` (a unique index: two concurrent creates give one config and one 409). ${SCHEDULE}`,
    tags: ['Collections'],
    auth: { role: 'admin' },
    body: z.strictObject({
      report_type: z.enum(REPORT_TYPES),
      frequency: z.enum(FREQUENCIES),
      time: TIME,
      weekday: WEEKDAY.nullable().optional(),
      recipient_emails: RECIPIENTS,
      cc_emails: CC.optional(),
      is_enabled: z.boolean().optional(),
    }),
    response: reportConfigSchema,
    errors: [403, 409],
    handler: async ({ body, identity, deps }) => reportConfigView(await createReportConfig(deps, identity.org, body)),
  }),
  route({
    method: 'get',
    path: '/v2/report-configs',
    operationId: 'listReportConfigs',
    summary: 'List report configs',
    description: 'By report type. Paginated: `page` (0-based), `page_size` 1..200.',
    tags: ['Collections'],
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(reportConfigSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await reportConfigsOf(deps, identity.org, page);
      return pageOf(rows.map(reportConfigView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/report-configs/{report_config_id}',
    operationId: 'getReportConfig',
    summary: 'Get a report config',
    description: 'Unknown, or another organization\'s: 404.',
    tags: ['Collections'],
    params,
    response: reportConfigSchema,
    errors: [404],
    handler: async ({ params: p, identity, deps }) => reportConfigView(await reportConfigOrThrow(deps, identity.org, p.report_config_id)),
  }),
  route({
    method: 'patch',
    path: '/v2/report-configs/{report_config_id}',
    operationId: 'updateReportConfig',
    summary: 'Change a report config',
    description:
      `${ADMIN_ONLY} Only the fields sent change (\`report_type\` cannot: delete and create instead); the result is checked ` +
      'against every rule again (e.g. switching to weekly needs a `weekday`; switching from weekly to another frequency drops the ' +
      `stored weekday). ${RULES} The Schedule is updated with it (paused or unpaused by \`is_enabled\`). ${SCHEDULE}`,
    tags: ['Collections'],
    auth: { role: 'admin' },
    params,
    body: z.strictObject({
      frequency: z.enum(FREQUENCIES).optional(),
      time: TIME.optional(),
      weekday: WEEKDAY.nullable().optional(),
      recipient_emails: RECIPIENTS.optional(),
      cc_emails: CC.optional(),
      is_enabled: z.boolean().optional(),
    }),
    response: reportConfigSchema,
    errors: [403, 404],
    handler: async ({ params: p, body, identity, deps }) => reportConfigView(await changeReportConfig(deps, identity.org, p.report_config_id, body)),
  }),
  route({
    method: 'delete',
    path: '/v2/report-configs/{report_config_id}',
    operationId: 'deleteReportConfig',
    summary: 'Delete a report config',
    description:
      `${ADMIN_ONLY} Deletes the config, its runs and its Temporal Schedule; 204 with no body (success status not shown in the ` +
      'spec). Should deleting the Schedule fail after the config is gone, the Schedule deletes itself at its next action.',
    tags: ['Collections'],
    auth: { role: 'admin' },
    params,
    errors: [403, 404],
    handler: async ({ params: p, identity, deps }) => {
      await removeReportConfig(deps, identity.org, p.report_config_id);
    },
  }),
  route({
    method: 'post',
    path: '/v2/report-configs/{report_config_id}/send',
    operationId: 'sendReportNow',
    summary: 'Send a report now',
    description:
      `${ADMIN_ONLY} Runs the config's report workflow now (also when the config is disabled), for the current time in the ` +
      'organization\'s timezone, to the config\'s recipients; answers 200 with the run in status `running` (follow it on ' +
      '`GET …/runs`). Each call is its own run and its own email.',
    tags: ['Collections'],
    auth: { role: 'admin' },
    params,
    response: reportRunSchema,
    errors: [403, 404],
    handler: async ({ params: p, identity, deps }) => reportRunView(await sendReportNow(deps, identity.org, p.report_config_id)),
  }),
  route({
    method: 'get',
    path: '/v2/report-configs/{report_config_id}/runs',
    operationId: 'listReportRuns',
    summary: 'List a report config\'s runs',
    description:
      'Newest scheduled time first, paginated (`page` 0-based, `page_size` 1..200). A run is `running` until its email was ' +
      'accepted by the mail server (`sent`, with `sent_at`) or it failed (`error`). Each scheduled time has exactly one run and ' +
      'at most one email, also when a worker dies mid-send.',
    tags: ['Collections'],
    params,
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(reportRunSchema),
    errors: [404],
    handler: async ({ params: p, query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await reportRunsOf(deps, identity.org, p.report_config_id, page);
      return pageOf(rows.map(reportRunView), total, page);
    },
  }),
];
