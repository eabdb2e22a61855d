/** SQL of credentials (API keys and user access tokens): only token hashes are stored; every change notifies the gateways' credential caches. */
import { generateToken, hashToken, newId, notifyAuthChanged, tokenHint, type CredentialKind, type Db } from '@rp/platform';
import type { Knex } from 'knex';

export interface CredentialRow {
  id: string;
  organization_id: string;
  kind: CredentialKind;
  user_id: string | null;
  name: string;
  token_hash: string;
  token_hint: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  created_by_user_id: string | null;
  created_at: Date;
  modified_at: Date;
}

/** Issue a credential: the token is returned once here and only its SHA-256 is stored. */
export async function issueCredential(
  db: Db | Knex.Transaction,
  input: { organizationId: string; kind: CredentialKind; userId?: string | null; name: string; expiresAt?: Date | null; createdBy?: string | null },
): Promise<{ row: CredentialRow; token: string }> {
  const token = generateToken(input.kind);
  const run = async (trx: Knex.Transaction) => {
    const [row] = await trx<CredentialRow>('credentials')
      .insert({
        id: newId(),
        organization_id: input.organizationId,
        kind: input.kind,
        user_id: input.kind === 'user' ? input.userId! : null,
        name: input.name,
        token_hash: hashToken(token),
        token_hint: tokenHint(token),
        expires_at: input.expiresAt ?? null,
        created_by_user_id: input.createdBy ?? null,
      })
      .returning('*');
    await notifyAuthChanged(trx, { created: true });
    return row;
  };
  const row = 'commit' in db ? await run(db as Knex.Transaction) : await (db as Db).transaction(run);
  return { row, token };
}

export async function listCredentials(db: Db, organizationId: string, kind: CredentialKind, offset: number, limit: number) {
  const q = () => db<CredentialRow>('credentials').where({ organization_id: organizationId, kind });
  const [rows, [{ count }]] = await Promise.all([
    q().orderBy('created_at').orderBy('id').offset(offset).limit(limit),
    q().count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as CredentialRow[], total: Number(count) };
}

/**
 * Revoke a credential of the organization (idempotent: an already revoked one keeps its first
 * revocation time). Undefined when it does not exist in this organization.
 */
export async function revokeCredential(db: Db, organizationId: string, id: string, kind?: CredentialKind): Promise<CredentialRow | undefined> {
  return db.transaction(async (trx) => {
    const q = trx<CredentialRow>('credentials').where({ id, organization_id: organizationId });
    if (kind) q.andWhere({ kind });
    const [row] = await q.update({ revoked_at: trx.raw('coalesce(revoked_at, now())'), modified_at: trx.fn.now() }).returning('*');
    if (row) await notifyAuthChanged(trx, { credential_id: row.id });
    return row as CredentialRow | undefined;
  });
}
