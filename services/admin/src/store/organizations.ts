/** SQL of organizations (admin schema). */
import { newId, type Db } from '@rp/platform';
import type { Knex } from 'knex';

export interface OrganizationRow {
  id: string;
  name: string;
  base_currency: string;
  timezone: string;
  /** numeric text 0..1 (4 decimals), or null: automatic approval off (migration 010) */
  auto_approve_threshold: string | null;
  /** HH:MM local (organization timezone): the collections daily run's Schedule time (migration 012) */
  collections_run_time: string;
  created_at: Date;
  modified_at: Date;
}

export async function insertOrganization(db: Db | Knex.Transaction, input: { name: string; base_currency: string; timezone: string }): Promise<OrganizationRow> {
  const [row] = await db<OrganizationRow>('organizations').insert({ id: newId(), ...input }).returning('*');
  return row;
}

export async function getOrganization(db: Db | Knex.Transaction, id: string): Promise<OrganizationRow | undefined> {
  return db<OrganizationRow>('organizations').where({ id }).first();
}

export async function listOrganizations(db: Db): Promise<OrganizationRow[]> {
  return db<OrganizationRow>('organizations').orderBy('id');
}

export async function setOrganizationTimezone(db: Db | Knex.Transaction, id: string, timezone: string): Promise<OrganizationRow | undefined> {
  const [row] = await db<OrganizationRow>('organizations').where({ id }).update({ timezone, modified_at: db.fn.now() }).returning('*');
  return row;
}

/** Sets (a number 0..1) or clears (null) the organization's automatic-approval threshold. */
export async function setAutoApproveThreshold(db: Db | Knex.Transaction, id: string, threshold: number | null): Promise<OrganizationRow | undefined> {
  const [row] = await db<OrganizationRow>('organizations')
    .where({ id })
    .update({ auto_approve_threshold: threshold === null ? null : String(threshold), modified_at: db.fn.now() })
    .returning('*');
  return row;
}

/** Sets the local time (HH:MM) of the organization's daily collections run. */
export async function setCollectionsRunTime(db: Db | Knex.Transaction, id: string, time: string): Promise<OrganizationRow | undefined> {
  const [row] = await db<OrganizationRow>('organizations').where({ id }).update({ collections_run_time: time, modified_at: db.fn.now() }).returning('*');
  return row;
}

/** The organization's timezone, its row share-locked until the transaction ends (a concurrent timezone change waits). */
export async function lockOrganizationTimezone(trx: Knex.Transaction, id: string): Promise<string | undefined> {
  const row = await trx<OrganizationRow>('organizations').where({ id }).forShare().first('timezone');
  return row?.timezone;
}
