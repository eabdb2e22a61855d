import { z } from 'zod';
import { ianaTimezone, NotFoundError, timestampsShape } from '@rp/platform';
import { route } from '../deps.js';
import { changeOrganizationTimezone } from '../domain/report-configs.js';
import { getOrganization, organizationView } from '../store/organizations.js';

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
    handler: async ({ identity, deps }) => {
      const org = await getOrganization(deps.db, identity.org);
      if (!org) throw new NotFoundError(`No organization ${identity.org}.`);
      return organizationView(org);
    },
  }),
  route({
    method: 'patch',
    path: '/v2/organization',
    operationId: 'updateOrganization',
    summary: 'Change the organization\'s timezone',
    description:
      'Organization admins only (members: 403). `timezone` must be an IANA timezone name (422 otherwise). Every report ' +
      'config\'s Temporal Schedule moves to the new timezone in the same transaction (same local time of day): if Temporal ' +
      'is unavailable, nothing changes (503). The name is stored in its canonical spelling (`europe/berlin` → `Europe/Berlin`). Dates already computed (runs, out-of-office periods) are kept.',
    tags: ['Organization'],
    auth: { role: 'admin' },
    body: z.strictObject({ timezone: ianaTimezone().describe('IANA timezone name, e.g. Europe/Berlin.') }),
    response: organizationSchema,
    errors: [403],
    handler: async ({ body, identity, deps }) => organizationView(await changeOrganizationTimezone(deps, identity.org, body.timezone)),
  }),
];
