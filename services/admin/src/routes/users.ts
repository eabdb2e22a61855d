/** Routes of the organization's users: list, create, read (with today's coverage), change. v2. */
import { z } from 'zod';
import { emailSchema, idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, permissionSchema } from '@rp/platform';
import { route } from '../deps.js';
import { callerDetail, createUser, updateUser, userDetail, usersOf } from '../domain/accounts.js';
import { userDetailView, userView } from '../views/users.js';
import { userDetailSchema, userSchema } from './schemas.js';

const COVERAGE_DOC =
  ' `ooo` is the out-of-office in force today in the organization\'s timezone (or null) and `covered_by` the backup handling the user\'s work today.';

const MAX_PAGE = 500;
const PERMISSIONS_DOC =
  'Permissions for the endpoints that move or rewrite money, granted to a member (admins hold all of them): see the role model in the API description. An unknown name gives 422.';

export const userRoutes = [
  route({
    method: 'get',
    path: '/v2/users',
    operationId: 'listUsers',
    summary: 'List the organization\'s users',
    tags: ['Organization'],
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(userSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await usersOf(deps, identity.org, page);
      return pageOf(rows.map(userView), total, page);
    },
  }),
  route({
    method: 'post',
    path: '/v2/users',
    operationId: 'createUser',
    summary: 'Create a user',
    description:
      'Creates the user with their role and business-unit access, and sends them a welcome email through ' +
      'the `welcome-email-<userId>` Temporal workflow. An email already used in the organization gives 409. ' +
      'Access tokens for the new user are issued with the CLI (`npm run cli -- token issue`).',
    tags: ['Organization'],
    auth: { role: 'admin' },
    body: z.object({
      email: emailSchema(),
      name: z.string().trim().min(1).max(256),
      role: z.enum(['admin', 'member']).default('member'),
      business_unit_ids: z.array(idSchema()).max(500).default([]).describe('Units a member may access (admins access all).'),
      permissions: z.array(permissionSchema()).max(20).default([]).describe(PERMISSIONS_DOC),
    }),
    response: userSchema,
    errors: [409],
    handler: async ({ body, identity, deps, requestId }) => userView(await createUser(deps, identity.org, body, requestId)),
  }),
  route({
    method: 'get',
    path: '/v2/users/me',
    operationId: 'getCurrentUser',
    summary: 'The user the access token belongs to',
    description: `The caller.${COVERAGE_DOC}`,
    tags: ['Organization'],
    response: userDetailSchema,
    handler: async ({ identity, deps }) => userDetailView(await callerDetail(deps, identity)),
  }),
  route({
    method: 'get',
    path: '/v2/users/{user_id}',
    operationId: 'getUser',
    summary: 'Get a user of the organization',
    tags: ['Organization'],
    description: `A user of the caller's organization (another organization's: 404).${COVERAGE_DOC}`,
    params: z.object({ user_id: idSchema() }),
    response: userDetailSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => userDetailView(await userDetail(deps, identity.org, params.user_id)),
  }),
  route({
    method: 'patch',
    path: '/v2/users/{user_id}',
    operationId: 'updateUser',
    summary: 'Change a user: name, role, access, deactivation',
    description:
      'Only the fields present change. `business_unit_ids` and/or `permissions` replace the current ones (an empty array removes ' +
      'all); `name` and `role` replace them; `is_active: false` deactivates the user, `true` reactivates them. Every change applies ' +
      'from the user\'s next request: every gateway\'s credential cache is told on commit, so a deactivated user\'s tokens are ' +
      'refused (401) at once, and work again after reactivation unless revoked meanwhile. An organization always keeps at least one ' +
      'active admin: demoting or deactivating its last one is 409 `conflict`, as is deactivating a user who is the backup of a pending ' +
      'out-of-office (change that coverage first). A business unit that is not one of the organization gives 422 with its index in ' +
      '`loc`; an unknown permission 422; an unknown user or another organization\'s 404.',
    tags: ['Organization'],
    auth: { role: 'admin' },
    params: z.object({ user_id: idSchema() }),
    body: z.strictObject({
      name: z.string().trim().min(1).max(256).optional(),
      role: z.enum(['admin', 'member']).optional(),
      is_active: z.boolean().optional().describe('false deactivates the user (their tokens stop working at once); true reactivates.'),
      business_unit_ids: z.array(idSchema()).max(500).optional().describe('Units a member may access (admins access all).'),
      permissions: z.array(permissionSchema()).max(20).optional().describe(PERMISSIONS_DOC),
    }),
    response: userSchema,
    errors: [404, 409],
    handler: async ({ params, body, identity, deps }) => {
      return userView(await updateUser(deps, identity.org, params.user_id, body));
    },
  }),
];
