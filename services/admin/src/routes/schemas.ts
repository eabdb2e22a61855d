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
