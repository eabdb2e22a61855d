/**
 * The partner (customer) summary of spec 2.13, shared by admin's and integrations' listings.
 */
import { z } from 'zod';
import { type PartnerSummaryRow } from './compiler.js';

/** Partner (customer) summary, spec 2.13 (every field), shared by admin's and integrations' listings. */
export const partnerSummarySchema = z
  .object({
    object: z.literal('partner'),
    id: z.string(),
    account_number: z.string().nullable(),
    assignee_id: z.string().nullable().describe('assigned user'),
    business_unit_id: z.string().nullable(),
    currency: z.string().nullable(),
    email: z.string().nullable().describe('company email'),
    name: z.string(),
    legal_name: z.string().nullable(),
    phone: z.string().nullable(),
    parent_id: z.string().nullable(),
    remote_id: z.string().describe('third-party id (the ERP customer code)'),
    created_at: z.string().describe('ISO 8601 UTC'),
    modified_at: z.string().describe('ISO 8601 UTC'),
  })
  .meta({ id: 'PartnerSummary' });

export function partnerSummaryView(r: PartnerSummaryRow): z.input<typeof partnerSummarySchema> {
  return {
    object: 'partner',
    id: r.id,
    account_number: r.account_number,
    assignee_id: r.assignee_id,
    business_unit_id: r.business_unit_id,
    currency: r.currency?.trim() ?? null,
    email: r.email,
    name: r.name,
    legal_name: r.legal_name,
    phone: r.phone,
    parent_id: r.parent_id,
    remote_id: r.remote_id,
    created_at: new Date(r.created_at).toISOString(),
    modified_at: new Date(r.modified_at).toISOString(),
  };
}
