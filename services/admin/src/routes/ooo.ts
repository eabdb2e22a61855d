/** Routes of a user's out-of-office periods (spec 2.6): create, list, change and end the pending one. v2. */
import { z } from 'zod';
import { idSchema, isoDate, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import { changePendingOoo, createOoo, endPendingOoo, listOooOfUser } from '../domain/ooo.js';
import { oooView } from '../views/ooo.js';
import { oooSchema } from './schemas.js';

const MAX_PAGE = 200;
const params = z.object({ user_id: idSchema() });
const RULES =
  'Rules, each a 422 `request-validation` naming its field: `backup_user_id` is another active user of the organization ' +
  '(another organization\'s user is an unknown one), not the user themself, and not out of office themself on any day of ' +
  'the period (no coverage chains); the user does not cover anybody else during the period either (`start_date`, ' +
  '`covering_others`); `start_date` ≤ `end_date` (`end_date`); `end_date` is not already past in the organization\'s ' +
  'timezone; two periods of one user never overlap (`start_date`, `ooo_overlap`; also a database exclusion constraint). ' +
  'A member manages only their own out-of-office (403 otherwise; `created_by_id` null = self-service); an admin manages ' +
  'anyone\'s (`created_by_id` = the admin when it is somebody else\'s; kept as it was on PATCH). An unknown user or another ' +
  'organization\'s: 404.';
const PENDING =
  'The *pending* out-of-office is the user\'s period whose end date is not yet past in the organization\'s timezone (active ' +
  'or scheduled); when there are several (an active one and later scheduled ones) it is the earliest-starting one.';

export const oooRoutes = [
  route({
    method: 'post',
    path: '/v2/users/{user_id}/ooo',
    operationId: 'createUserOoo',
    summary: 'Put a user out of office with a backup',
    description: `Creates an out-of-office period: \`backup_user_id\` handles the user's work from \`start_date\` to \`end_date\` (inclusive; omitted or null = open-ended). ${RULES}`,
    tags: ['Organization'],
    params,
    body: z.strictObject({
      backup_user_id: idSchema(),
      start_date: isoDate(),
      end_date: isoDate().nullable().optional().describe('Planned last day of coverage; omitted or null = open-ended.'),
    }),
    response: oooSchema,
    errors: [403, 404],
    handler: async ({ params: p, body, identity, deps }) =>
      oooView(await createOoo(deps, identity, p.user_id, { backup_user_id: body.backup_user_id, start_date: body.start_date, end_date: body.end_date ?? null })),
  }),
  route({
    method: 'get',
    path: '/v2/users/{user_id}/ooo',
    operationId: 'listUserOoo',
    summary: 'A user\'s out-of-office periods, newest first',
    description: 'Every period of the user, past, active and scheduled, newest (latest start) first, paginated. Any user of the organization may read them.',
    tags: ['Organization'],
    params,
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(oooSchema),
    errors: [404],
    handler: async ({ params: p, query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await listOooOfUser(deps, identity, p.user_id, page);
      return pageOf(rows.map(oooView), total, page);
    },
  }),
  route({
    method: 'patch',
    path: '/v2/users/{user_id}/ooo',
    operationId: 'updateUserOoo',
    summary: 'Change a user\'s pending out-of-office',
    description:
      `Spec row 8. ${PENDING} Only the fields present in the body change; \`end_date: null\` clears the end date (open-ended); ` +
      `\`backup_user_id\` and \`start_date\` may not be null. The changed period is checked against every rule again. No pending ` +
      `out-of-office: 404 \`entity-not-found\`. ${RULES}`,
    tags: ['Organization'],
    params,
    body: z.strictObject({
      backup_user_id: idSchema().optional(),
      start_date: isoDate().optional(),
      end_date: isoDate().nullable().optional().describe('null clears the end date (open-ended).'),
    }),
    response: oooSchema,
    errors: [403, 404],
    handler: async ({ params: p, body, identity, deps }) => oooView(await changePendingOoo(deps, identity, p.user_id, body)),
  }),
  route({
    method: 'delete',
    path: '/v2/users/{user_id}/ooo',
    operationId: 'endUserOoo',
    summary: 'End a user\'s pending out-of-office',
    description:
      `${PENDING} An active one ends today (its \`end_date\` becomes today in the organization's timezone: today is its last day ` +
      'of coverage); a scheduled one is removed. Success status (not shown in the spec): 200 with the record as it is after the ' +
      'change (a removed one as it was). No pending out-of-office: 404 `entity-not-found`. A member may end only their own (403).',
    tags: ['Organization'],
    params,
    response: oooSchema,
    errors: [403, 404],
    handler: async ({ params: p, identity, deps }) => oooView(await endPendingOoo(deps, identity, p.user_id)),
  }),
];
