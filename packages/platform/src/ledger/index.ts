/**
 * The AR ledger read module: the one place outside the integrations service that reads the
 * ledger (partners, invoices, credit memos, line items). Integrations owns and writes those tables
 * (schema `integrations`); every other service reads them through these functions, never with SQL
 * of its own against that schema. Every read is scoped to one organization. Amounts are NUMERIC
 * strings (exact); dates are 'YYYY-MM-DD' strings. One file per question: tables, business-unit
 * scope, partners, open items, predicted-overdue inputs, aging.
 */
export * from './tables.js';
export * from './scope.js';
export * from './partners.js';
export * from './open-items.js';
export * from './predicted-overdue.js';
export * from './aging.js';
export * from './inbox-lookups.js';
export * from './partner-emails.js';
