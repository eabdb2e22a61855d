/**
 * The host on which an organization receives email (the AR inbox), read side. Admin owns the
 * mailbox settings (schema `admin`, table `mailbox_settings`, column `inbound_parse_hostname`); this
 * module is the one reader of that column outside admin, so cash-app's outbound emails can name the
 * inbox in their Reply-To. The rule is admin's (domain/mailbox-settings.ts effectiveInboundHostname):
 * the custom `inbound_parse_hostname` when set, else `<organization id>.<MAIL_INBOUND_DOMAIN>`.
 */
import type { Knex } from 'knex';

export const MAILBOX_SETTINGS_TABLE = 'admin.mailbox_settings';

/** The organization's effective inbound host name, lower case. */
export async function effectiveInboundHost(db: Knex, organizationId: string, inboundDomain: string): Promise<string> {
  const row = (await db(MAILBOX_SETTINGS_TABLE).where({ organization_id: organizationId }).first('inbound_parse_hostname')) as { inbound_parse_hostname: string | null } | undefined;
  return (row?.inbound_parse_hostname ?? `${organizationId}.${inboundDomain}`).toLowerCase();
}

/** The AR mailbox of the organization (`ar@<effective inbound host>`): where replies to its outreach go. */
export async function arReplyAddress(db: Knex, organizationId: string, inboundDomain: string): Promise<string> {
  return `ar@${await effectiveInboundHost(db, organizationId, inboundDomain)}`;
}
