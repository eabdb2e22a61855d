/** SQL of the organization's mailbox settings (admin schema); the domain-send key is stored sealed. */
import type { Knex } from 'knex';
import type { Db } from '@rp/platform';

export interface MicrosoftSettings {
  enabled: boolean;
  admin_consented: boolean;
  admin_consented_at: string | null;
  application_scopes: string[];
  delegated_scopes: string[];
  azure_tenant_id: string | null;
  azure_client_id: string | null;
  is_byo: boolean;
  uses_legacy_entra_app: boolean;
}

export interface CentralizedInboxSettings {
  auto_assign: boolean;
  auto_assign_threshold: number;
  matching_guidelines: string | null;
}

export interface MailboxSettingsRow {
  organization_id: string;
  transport_provider: 'oauth_sync' | 'domain_send';
  hybrid_mode_enabled: boolean;
  microsoft: MicrosoftSettings;
  google: { enabled: boolean };
  centralized_inbox: CentralizedInboxSettings;
  domain_name: string | null;
  inbound_parse_hostname: string | null;
  /** kernel secrets envelope of the domain-send API key; never leaves the service */
  api_key_envelope: string | null;
  updated_by_user_id: string | null;
  created_at: Date;
  modified_at: Date;
}

export type MailboxSettingsWrite = Omit<MailboxSettingsRow, 'created_at' | 'modified_at'>;

export async function getMailboxSettings(db: Db | Knex.Transaction, organizationId: string, opts: { forUpdate?: boolean } = {}): Promise<MailboxSettingsRow | undefined> {
  const q = db<MailboxSettingsRow>('mailbox_settings').where({ organization_id: organizationId });
  return (opts.forUpdate ? q.forUpdate() : q).first();
}

/** Serializes the first configuration of an organization's settings (there is no row to lock yet). */
export async function lockOrganizationRow(trx: Knex.Transaction, organizationId: string): Promise<boolean> {
  return Boolean(await trx('organizations').where({ id: organizationId }).forUpdate().first('id'));
}

/** Another organization already receives mail on this custom host name (case-insensitive). */
export async function inboundHostTaken(trx: Knex.Transaction, organizationId: string, host: string): Promise<boolean> {
  const row = await trx('mailbox_settings')
    .whereRaw('lower(inbound_parse_hostname) = lower(?)', [host])
    .whereNot({ organization_id: organizationId })
    .first('organization_id');
  return Boolean(row);
}

/** Insert or replace the organization's settings; null when another organization took the custom inbound host meanwhile. */
export async function saveMailboxSettings(trx: Knex.Transaction, row: MailboxSettingsWrite): Promise<MailboxSettingsRow | null> {
  const values = {
    ...row,
    microsoft: JSON.stringify(row.microsoft),
    google: JSON.stringify(row.google),
    centralized_inbox: JSON.stringify(row.centralized_inbox),
  };
  try {
    const [saved] = await trx('mailbox_settings')
      .insert(values)
      .onConflict('organization_id')
      .merge({ ...values, modified_at: trx.fn.now() })
      .returning('*');
    return saved as MailboxSettingsRow;
  } catch (err) {
    if ((err as { code?: string; constraint?: string }).constraint === 'mailbox_settings_inbound_host_uq') return null;
    throw err;
  }
}
