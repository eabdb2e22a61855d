/** Routes of the caller's organization: read it and change its timezone and cash-application settings. v2. */
import { z } from 'zod';
import { ianaTimezone, timestampsShape } from '@rp/platform';
import { route } from '../deps.js';
import { changeOrganization, organizationOrThrow } from '../domain/organization.js';
import { organizationView } from '../views/organizations.js';

const AUTO_APPROVE_DESCRIPTION =
  'Extension of the spec. Automatic approval of matched payments: when a bank statement is processed, every payment ' +
  'automatic matching proposes with a `match_score` at or above this threshold is approved without a user, exactly as ' +
  'POST /v2/payments/{payment_id}/approve approves it (the same re-check of open amounts, the payer\'s account learned, ' +
  'the ERP posting started), with `approved_by` null and `auto_approved: true` on the payment. A proposal the re-check ' +
  'refuses stays unapproved for a person. Proposals already made when the threshold is set are not approved ' +
  'retroactively. `null` (the default) is off: nothing is approved automatically. A number 0..1 with at most 4 decimals. ' +
  'The measured precision of proposals at each threshold on the labelled matching benchmark is in docs/benchmarks.md ' +
  '(`npm run bench -- matching`).';

const RUN_TIME_DESCRIPTION =
  'Extension of the spec. Local time of day (HH:MM, 24-hour, in the organization\'s `timezone`) of the daily collections run: the Temporal Schedule ' +
  '`collections-<organization id>` starts it at this wall-clock time on both sides of a daylight-saving change (a time clocks skip runs at the first valid minute after the gap). ' +
  'Default `08:00`. The Schedule exists while the organization has a collection policy (paused while none is enabled).';

export const organizationSchema = z
  .object({
    object: z.literal('organization'),
    id: z.string(),
    name: z.string(),
    base_currency: z.string(),
    timezone: z.string().describe('IANA timezone: the organization\'s dates (aging, out-of-office days) and report schedules.'),
    auto_approve_threshold: z.number().min(0).max(1).nullable().describe(AUTO_APPROVE_DESCRIPTION),
    collections_run_time: z.string().describe(RUN_TIME_DESCRIPTION),
    ...timestampsShape,
  })
  .meta({ id: 'Organization' });

export const organizationRoutes = [
  route({
    method: 'get',
    path: '/v2/organization',
    operationId: 'getOrganization',
    summary: 'The caller\'s organization',
    tags: ['Organization'],
    response: organizationSchema,
    handler: async ({ identity, deps }) => organizationView(await organizationOrThrow(deps, identity.org)),
  }),
  route({
    method: 'patch',
    path: '/v2/organization',
    operationId: 'updateOrganization',
    summary: 'Change the organization\'s timezone and settings',
    description:
      'Organization admins only (members: 403). Each field is changed only when given; at least one is required (422 otherwise). ' +
      '`auto_approve_threshold` (an extension of the spec): a number 0..1 with at most 4 decimals, or null to turn automatic ' +
      'approval off; anything else (e.g. -1, 2, "x") is 422 and changes nothing. ' +
      '`timezone` must be an IANA timezone name (422 otherwise). The change is committed ' +
      'first; then the workflow `organization-schedules-<organization id>` moves every report config\'s Temporal Schedule to it ' +
      '(same local time of day), one by one, each step retried until it succeeds, from the committed state (a later change wins). ' +
      'The answer does not wait for it, and Temporal being unavailable does not refuse the change: the Schedules converge when ' +
      'the workflow can start — at the next PATCH (sending the same timezone again is enough) or at the next action of a Schedule ' +
      'still in the old timezone. The same workflow moves the daily collections Schedule to a new `timezone` or `collections_run_time`, with the same guarantees. The name is stored in its canonical spelling (`europe/berlin` → `Europe/Berlin`). Dates already computed (runs, out-of-office periods) are kept.',
    tags: ['Organization'],
    auth: { role: 'admin' },
    body: z
      .strictObject({
        timezone: ianaTimezone().max(64).optional().describe('IANA timezone name, e.g. Europe/Berlin (at most 64 characters).'),
        auto_approve_threshold: z
          .number()
          .min(0)
          .max(1)
          .refine((v) => Math.abs(v * 10_000 - Math.round(v * 10_000)) < 1e-6, 'must have at most 4 decimals (a match score is stored with 4)')
          .nullable()
          .optional()
          .describe(AUTO_APPROVE_DESCRIPTION),
        collections_run_time: z
          .string()
          .max(5)
          .regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, 'must be a local time HH:MM (00:00..23:59)')
          .optional()
          .describe(`${RUN_TIME_DESCRIPTION} Exactly 5 characters HH:MM.`),
      })
      .refine(
        (b) => b.timezone !== undefined || b.auto_approve_threshold !== undefined || b.collections_run_time !== undefined,
        'give `timezone`, `auto_approve_threshold` and/or `collections_run_time`',
      ),
    response: organizationSchema,
    errors: [403],
    handler: async ({ body, identity, deps, log }) =>
      organizationView(
        await changeOrganization({ ...deps, log }, identity.org, { timezone: body.timezone, autoApproveThreshold: body.auto_approve_threshold, collectionsRunTime: body.collections_run_time }),
      ),
  }),
];
