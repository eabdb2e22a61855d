/** Types of the collections engine that the domain and the store share. */

export interface PlanStep {
  step_index: number;
  offset_days: number;
  channel: 'email' | 'sms' | 'task';
  email_template_id: string | null;
  sms_template_id: string | null;
  /** decimal text in the organization's local currency, or null */
  min_overdue_lc: string | null;
}

export type SkipReason = 'below_min_overdue' | 'no_email_address' | 'email_bouncing' | 'no_phone_number' | 'all_invoices_on_hold';
