/** The admin service's public entry: its module (routes, migrations, activities). */
export { adminModule } from './module.js';
export { adminConfigSchema, loadAdminConfig, type AdminConfig } from './config.js';
export { onboardOrganization, createUser } from './domain/accounts.js';
export { migrations as adminMigrations } from '../migrations/index.js';
// AR inbox: mail in (the SMTP listener the test stack and the bench run; the intake other parts call)
export { startInboundSmtp, type RunningInboundSmtp } from './inbound/smtp.js';
export { acceptInboundMessage, type IntakeDeps, type InboundMessageInput } from './domain/inbox/intake.js';
