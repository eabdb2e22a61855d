/** Routes of user invites: invite, list pending, revoke by email, accept with the token (no bearer token). v1. */
import { z } from 'zod';
import { emailSchema, idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import { acceptInvite, createInvite, pendingInvites, revokeInviteByEmail } from '../domain/invites.js';
import { inviteView } from '../views/invites.js';
import { credentialView } from '../views/credentials.js';
import { userView } from '../views/users.js';
import { userInviteSchema, userSchema } from './schemas.js';

const MAX_PAGE = 200;
const V1 =
  'Errors use the v1 shapes: validation `{detail: {<location>: {<field>: [msg]}}, message}`, others `{data: {}, error: <type>, message}`.';

const acceptanceSchema = z
  .object({
    object: z.literal('user_invite_acceptance'),
    user: userSchema,
    access_token: z
      .object({
        object: z.literal('access_token'),
        id: z.string(),
        name: z.string(),
        user_id: z.string().nullable().optional(),
        token_hint: z.string(),
        token: z.string().describe('The bearer token itself: shown once, here only. Store it safely.'),
        expires_at: z.string().nullable(),
        revoked_at: z.string().nullable(),
        created_at: z.string(),
        modified_at: z.string(),
      })
      .describe('The new user\'s first access token.'),
  })
  .meta({ id: 'UserInviteAcceptance' });

const revokedSchema = z
  .object({
    data: userInviteSchema.describe('The revoked invite.'),
    error: z.null(),
    message: z.string(),
  })
  .meta({ id: 'UserInviteRevocation' });

export const userInviteRoutes = [
  route({
    method: 'post',
    path: '/v1/user-invites',
    operationId: 'createUserInvite',
    summary: 'Invite a user by email',
    description:
      'Creates an invite with a single-use token (random; only its SHA-256 is stored; valid for `USER_INVITE_TTL_SECONDS`, default ' +
      '7 days) and starts the Temporal workflow `user-invite-<invite id>` (admin task queue), which emails the token to the address ' +
      'once (the outbound email is recorded before and after the SMTP call). The token is in the email only, never in an API answer. ' +
      'An email that is already a user of the organization: 409. An email with an open invite (pending or expired): the invite is ' +
      're-sent — the old one is revoked (its token is dead) and a new invite with a new id and token is answered. Emails are ' +
      `matched case-insensitively. A business unit that is not the organization's: 422. Success status (not shown in the spec): 200. ${V1}`,
    tags: ['Organization'],
    auth: { role: 'admin' },
    body: z.strictObject({
      email: emailSchema(),
      role: z.enum(['admin', 'member']).default('member'),
      business_unit_ids: z.array(idSchema()).max(500).default([]).describe('Units the member will access (admins access all).'),
    }),
    response: userInviteSchema,
    errors: [409],
    handler: async ({ body, identity, deps, requestId }) => {
      const { invite } = await createInvite(deps, identity, body, requestId);
      return inviteView(invite);
    },
  }),
  route({
    method: 'get',
    path: '/v1/user-invites',
    operationId: 'listUserInvites',
    summary: 'Pending user invites',
    description: `The organization's pending invites (not accepted, revoked or expired), newest first, paginated (page size 1..200). Admins only. ${V1}`,
    tags: ['Organization'],
    auth: { role: 'admin' },
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(userInviteSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await pendingInvites(deps, identity.org, page);
      return pageOf(rows.map(inviteView), total, page);
    },
  }),
  route({
    method: 'delete',
    path: '/v1/user-invites/{email}',
    operationId: 'revokeUserInvite',
    summary: 'Revoke the pending invite of an email',
    description:
      'Spec row 23. The email in the path is URL-decoded (`a%2Bb%40x.com` is `a+b@x.com`) and matched case-insensitively. Revokes ' +
      'its pending invite (its token is refused from then on) and answers the v1 body `{data: <the revoked invite>, error: null, ' +
      'message}` with status 200 (not shown in the spec). No pending invite for the email (none, accepted, revoked, expired, or ' +
      `another organization's): 404 \`{data: {}, error: "entity-not-found", message}\`. Admins only. ${V1}`,
    tags: ['Organization'],
    auth: { role: 'admin' },
    params: z.object({ email: emailSchema() }),
    response: revokedSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => {
      const invite = await revokeInviteByEmail(deps, identity.org, params.email);
      return { data: inviteView(invite), error: null, message: `The invite for ${invite.email} was revoked.` };
    },
  }),
  route({
    method: 'post',
    path: '/v1/user-invites/accept',
    operationId: 'acceptUserInvite',
    summary: 'Accept an invite (no bearer token)',
    description:
      'The invite token from the email is the credential: send no Authorization header (the gateway ignores one here). Creates the ' +
      'user with the invited role and business units (those that still exist), marks the invite used and issues the user\'s first ' +
      'access token, answered once in `access_token.token`. No welcome email is sent (the invitation was it). An unknown, revoked, ' +
      're-sent, expired or already used token: 401 `{data: {}, error: "unauthorized", message}`. The email became a user meanwhile: ' +
      '409. The gateway rate-limits this route per client address (`PUBLIC_RATE_LIMIT_BURST`, `PUBLIC_RATE_LIMIT_PER_MINUTE`: 429 ' +
      `with Retry-After), and each 401 counts against the address's failed-authentication budget. ${V1}`,
    tags: ['Organization'],
    auth: { public: true },
    body: z.strictObject({
      token: z.string().min(1).max(256).describe('The invitation token from the email (`rpi_…`).'),
      name: z.string().trim().min(1).max(256).describe('The new user\'s name.'),
    }),
    response: acceptanceSchema,
    errors: [409],
    handler: async ({ body, deps }) => {
      const { user, credential, token } = await acceptInvite(deps, body);
      return { object: 'user_invite_acceptance' as const, user: userView(user), access_token: credentialView(credential, token) as z.input<typeof acceptanceSchema>['access_token'] };
    },
  }),
];
