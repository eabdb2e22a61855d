// Contracts, task queues and business-id helpers for services (never imported by workflow code).
export * from './task-queues.js';
export * from './search-attributes.js';
export * from './activity-options.js';
export * from './admin/welcome-email.js';
export * from './cash-app/payment-receipt.js';
export * from './cash-app/matching.js';
export * from './cash-app/auto-approval.js';
export * from './cash-app/bank-statement.js';
export * from './integrations/connection-sync.js';
export * from './integrations/payment-posting.js';
export * from './admin/cnam-registration.js';
export * from './admin/user-invite.js';
export * from './reports/contracts.js';
export * from './knowledge/playbook-extraction.js';
export * from './knowledge/contracts.js';
export * from './admin/scheduled-report.js';
export * from './admin/organization-schedules.js';
