/** The organization's mailbox settings as the API shows them (spec 2.19): the domain-send API key only as `has_api_key`. */
import { isoTime } from '@rp/platform';
import { effectiveInboundHostname } from '../domain/mailbox-settings.js';
import type { MailboxSettingsRow } from '../store/mailbox-settings.js';

export function mailboxSettingsView(row: MailboxSettingsRow, inboundDomain: string) {
  return {
    object: 'mailbox_settings' as const,
    transport_provider: row.transport_provider,
    hybrid_mode_enabled: row.hybrid_mode_enabled,
    microsoft: row.microsoft,
    google: row.google,
    centralized_inbox: row.centralized_inbox,
    domain_send: {
      domain_name: row.domain_name,
      inbound_parse_hostname: row.inbound_parse_hostname,
      effective_inbound_hostname: effectiveInboundHostname(row, inboundDomain),
      has_api_key: row.api_key_envelope !== null,
    },
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
}
