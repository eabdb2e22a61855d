/**
 * Which organization a recipient address belongs to: `anything@<host>` where the host is the custom
 * `inbound_parse_hostname` of the organization's mailbox settings, or the platform default
 * `<organization id>.<MAIL_INBOUND_DOMAIN>`. The default host keeps receiving after a custom host is
 * set, so replies to addresses handed out earlier still arrive. Any other address belongs to nobody
 * (refused at RCPT time).
 */
import type { Db } from '@rp/platform';
import { isHostname } from '../domain/hostnames.js';
import { organizationByInboundHost, organizationExists } from '../store/inbound.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The organization id receiving mail for `address`, or null. */
export async function organizationForRecipient(deps: { db: Db; inboundDomain: string }, address: string): Promise<string | null> {
  const at = address.lastIndexOf('@');
  if (at <= 0 || address.length > 320) return null;
  const host = address.slice(at + 1).toLowerCase().replace(/\.$/, '');
  if (!isHostname(host)) return null;
  const domain = deps.inboundDomain.toLowerCase();
  if (host.endsWith(`.${domain}`)) {
    const label = host.slice(0, -domain.length - 1);
    return UUID.test(label) && (await organizationExists(deps.db, label)) ? label : null;
  }
  return organizationByInboundHost(deps.db, host);
}
