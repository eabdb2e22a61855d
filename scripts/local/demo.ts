import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { createDb, newId } from '@rp/platform';
import { onboardOrganization, createUser } from '@rp/admin';

export interface DemoCredentials {
  organization_id: string;
  organization_name: string;
  admin_user_id: string;
  admin_email: string;
  access_token: string;
  api_key: string;
  member_user_id: string;
}

/**
 * On first start, a demo organization with an admin (access token + API key), two business units
 * and a member user; the credentials go to `file` (var/demo-credentials.json). Later starts reuse it.
 */
export async function seedDemo(opts: { databaseUrl: string; temporal: Client; file: string }): Promise<DemoCredentials> {
  const db = createDb({ url: opts.databaseUrl, schema: 'admin', poolMax: 2, applicationName: 'demo-seed' });
  try {
    if (existsSync(opts.file)) {
      const saved = JSON.parse(readFileSync(opts.file, 'utf8')) as DemoCredentials;
      if (await db('organizations').where({ id: saved.organization_id }).first()) return saved;
    }
    const o = await onboardOrganization(
      { db, temporal: opts.temporal },
      { name: 'Demo Receivables GmbH', base_currency: 'EUR', timezone: 'Europe/Berlin', admin: { email: 'ada.admin@demo.example', name: 'Ada Admin' } },
    );
    const units = [
      { id: newId(), organization_id: o.organization.id, name: 'EMEA', description: 'Europe, Middle East and Africa' },
      { id: newId(), organization_id: o.organization.id, name: 'Americas', description: 'North and South America' },
    ];
    await db('business_units').insert(units);
    const member = await createUser({ db, temporal: opts.temporal }, o.organization.id, {
      email: 'max.member@demo.example',
      name: 'Max Member',
      role: 'member',
      business_unit_ids: [units[0].id],
    });
    const creds: DemoCredentials = {
      organization_id: o.organization.id,
      organization_name: o.organization.name,
      admin_user_id: o.user.id,
      admin_email: o.user.email,
      access_token: o.accessToken.token,
      api_key: o.apiKey.token,
      member_user_id: member.id,
    };
    writeFileSync(opts.file, JSON.stringify(creds, null, 2), { mode: 0o600 });
    return creds;
  } finally {
    await db.destroy();
  }
}
