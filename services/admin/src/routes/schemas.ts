/** Response schemas of the organization area, shared by its routes. */
import { z } from 'zod';
import { timestampsShape } from '@rp/platform';


export const businessUnitSchema = z.object({
  object: z.literal('business_unit'),
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  ...timestampsShape,
})
  .meta({ id: 'BusinessUnit' });

export const userSchema = z.object({
  object: z.literal('user'),
  id: z.string(),
  organization_id: z.string(),
  email: z.string(),
  name: z.string(),
  role: z.enum(['admin', 'member']),
  business_unit_ids: z.array(z.string()).describe('Units a member may access; admins access all.'),
  permissions: z
    .array(z.string())
    .describe('Permissions granted to the user for endpoints that move or rewrite money (see the role model in the API description); admins hold every permission whatever this lists.'),
  is_active: z.boolean(),
  ...timestampsShape,
})
  .meta({ id: 'User' });

export const apiKeySchema = z.object({
  object: z.literal('api_key'),
  id: z.string(),
  name: z.string(),
  token_hint: z.string().describe('First characters of the key, to tell keys apart.'),
  token: z.string().optional().describe('The key itself: returned once, on creation only. Store it safely.'),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  ...timestampsShape,
})
  .meta({ id: 'ApiKey' });

export const oooSchema = z
  .object({
    object: z.literal('user_ooo'),
    id: z.string(),
    user_id: z.string().describe('The user who is out of office.'),
    backup_user_id: z.string().describe('The user covering them.'),
    created_by_id: z.string().nullable().describe('The admin who set it up for the user; null = self-service (the user themself).'),
    start_date: z.string().describe('First day out of office (YYYY-MM-DD).'),
    end_date: z.string().nullable().describe('Planned last day of coverage (YYYY-MM-DD); null = open-ended.'),
    ...timestampsShape,
  })
  .meta({ id: 'UserOoo' });

export const userDetailSchema = userSchema
  .extend({
    ooo: oooSchema.nullable().describe('The out-of-office in force today in the organization\'s timezone, or null.'),
    covered_by: z
      .object({ id: z.string(), name: z.string(), email: z.string() })
      .nullable()
      .describe('The backup handling the user\'s work today (while `ooo` is in force), or null.'),
  })
  .meta({ id: 'UserDetail' });

export const userInviteSchema = z
  .object({
    object: z.literal('user_invite'),
    id: z.string(),
    email: z.string(),
    role: z.enum(['admin', 'member']),
    business_unit_ids: z.array(z.string()).describe('Units the user will access (a member; admins access all).'),
    status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
    invited_by_id: z.string().nullable().describe('The admin who sent it.'),
    expires_at: z.string().describe('ISO 8601 UTC; the token is refused from then on.'),
    accepted_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
    ...timestampsShape,
  })
  .meta({ id: 'UserInvite' });
