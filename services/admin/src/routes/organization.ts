/** Routes of the caller's organization: read it and change its timezone. v2. */
import { z } from 'zod';
import { ianaTimezone, timestampsShape } from '@rp/platform';
import { route } from '../deps.js';
import { changeOrganizationTimezone } from '../domain/report-configs.js';
import { organizationOrThrow } from '../domain/organization.js';
import { organizationView } from '../views/organizations.js';

export const organizationSchema = z
  .object({
    object: z.literal('organization'),
    id: z.string(),
    name: z.string(),
    base_currency: z.string(),
    timezone: z.string().describe('IANA timezone: the organization\'s dates (aging, out-of-office days) and report schedules.'),
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
    summary: 'Change the organization\'s timezone',
    description:
      'Organization admins only (members: 403). `timezone` must be an IANA timezone name (422 otherwise). The change is committed ' +
      'first; then the workflow `organization-schedules-<organization id>` moves every report config\'s Temporal Schedule to it ' +
      '(same local time of day), one by one, each step retried until it succeeds, from the committed state (a later change wins). ' +
      'The answer does not wait for it, and Temporal being unavailable does not refuse the change: the Schedules converge when ' +
      'the workflow can start — at the next PATCH (sending the same timezone again is enough) or at the next action of a Schedule ' +
      'still in the old timezone. The name is stored in its canonical spelling (`europe/berlin` → `Europe/Berlin`). Dates already computed (runs, out-of-office periods) are kept.',
    tags: ['Organization'],
    auth: { role: 'admin' },
    body: z.strictObject({ timezone: ianaTimezone().max(64).describe('IANA timezone name, e.g. Europe/Berlin (at most 64 characters).') }),
    response: organizationSchema,
    errors: [403],
    handler: async ({ body, identity, deps, log }) => organizationView(await changeOrganizationTimezone({ ...deps, log }, identity.org, body.timezone)),
  }),
];
