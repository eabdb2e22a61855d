import { z } from 'zod';
import type { Identity } from '../identity.js';

/**
 * The role model. Two roles: organization `admin` (everything, every business unit) and `member`
 * (reads everything of their business units; writes that move or rewrite money need a permission).
 * A permission is granted to a member by an admin (POST/PATCH /v2/users `permissions`); admins hold
 * all of them implicitly. Organization API keys hold no role and no permission: they may call only
 * the routes that accept API keys (the middleware push, payment-posting reports and sync routes),
 * none of which moves money on the platform's side.
 */
export const PERMISSIONS = {
  'payments:write': 'Create payments for deposits and change a payment\'s allocations and payer (POST /v2/payments, PATCH /v2/payments/{payment_id}).',
  'payments:approve': 'Approve payments (POST /v2/payments/{payment_id}/approve), which starts their posting to the ERP.',
  'erp-postings:write': 'Post, retry posting and remove (unpost) approved payments in the ERP (POST /v2/payments/{payment_id}/post and /unpost).',
  'exchange-rates:write': 'Load exchange rates (PUT /v2/exchange-rates), which convert open amounts in analytics and matching.',
  'adjustments:write': 'Create, change and delete adjustments (fees, write-offs) and create ledger accounts (POST/PATCH/DELETE /v2/adjustments…).',
} as const;

export type Permission = keyof typeof PERMISSIONS;
export const PERMISSION_NAMES = Object.keys(PERMISSIONS) as [Permission, ...Permission[]];

export const permissionSchema = () =>
  z.enum(PERMISSION_NAMES).describe(`A permission: ${PERMISSION_NAMES.map((p) => `\`${p}\``).join(', ')}.`);

export function isPermission(name: string): name is Permission {
  return Object.prototype.hasOwnProperty.call(PERMISSIONS, name);
}

/** Whether the identity holds the permission: admins hold every one; members those granted to them. */
export function hasPermission(identity: Identity, permission: Permission): boolean {
  if (identity.kind !== 'user') return false;
  if (identity.role === 'admin') return true;
  return (identity.perms ?? []).includes(permission);
}

/** The role model in prose, for the OpenAPI description. */
export const ROLE_MODEL_DOC =
  'Roles and permissions: a user access token acts as its user, an organization `admin` or a `member`. Admins may call ' +
  'everything and see every business unit. Members read everything of the business units assigned to them (records not ' +
  'tied to a unit are visible to all; records of other units answer 404 and are absent from lists, exactly like records ' +
  'that do not exist) and may not call admin-only endpoints (403 `forbidden`). Endpoints that move or rewrite money ' +
  'require a permission, which admins hold implicitly and grant to members per user (`permissions` of POST/PATCH ' +
  `/v2/users): ${PERMISSION_NAMES.map((p) => `\`${p}\` — ${PERMISSIONS[p]}`).join(' ')} A member without the permission ` +
  'gets 403 `forbidden` and nothing changes. Each operation names its requirement in its description and in ' +
  '`x-rp-auth` (`role`, `permission`, `credentials`). Organization API keys (`rpk_…`) hold no role and no permission: ' +
  'they are accepted only by the endpoints that list `api_key` in `x-rp-auth.credentials` (the middleware push, its ' +
  'payment-posting reports and the connection sync), see every business unit, and get 403 everywhere else.';
