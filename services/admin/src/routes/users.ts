import { z } from 'zod';
import { emailSchema, idSchema, isUuid, NotFoundError, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import { getUser, listUsers, userView } from '../store/users.js';
import { createUser } from '../domain/accounts.js';
import { userSchema } from './schemas.js';

const MAX_PAGE = 500;

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
      const { rows, total } = await listUsers(deps.db, identity.org, page.offset, page.pageSize);
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
    tags: ['Organization'],
    response: userSchema,
    handler: async ({ identity, deps }) => {
      const user = identity.sub ? await getUser(deps.db, identity.org, identity.sub) : undefined;
      if (!user) throw new NotFoundError('The user of this token no longer exists.');
      return userView(user);
    },
  }),
  route({
    method: 'get',
    path: '/v2/users/{user_id}',
    operationId: 'getUser',
    summary: 'Get a user of the organization',
    tags: ['Organization'],
    params: z.object({ user_id: idSchema() }),
    response: userSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => {
      const user = isUuid(params.user_id) ? await getUser(deps.db, identity.org, params.user_id) : undefined;
      if (!user) throw new NotFoundError(`No user ${params.user_id}.`);
      return userView(user);
    },
  }),
];
