/** Outreach record kinds and statuses, shared by the domain rules, the store and the API schema. */
export const OUTREACH_TYPES = ['payment_receipt', 'remittance_request'] as const;
export const OUTREACH_STATUSES = ['pending', 'sent', 'failed', 'skipped'] as const;
export type OutreachStatus = (typeof OUTREACH_STATUSES)[number];
