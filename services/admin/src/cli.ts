/**
 * Administration CLI (`npm run cli -- <command> [options]`); every command prints JSON.
 *
 *   org create   --name N --admin-email E --admin-name N [--currency EUR] [--timezone Europe/Berlin]
 *   org list
 *   user create  --org ID --email E --name N [--role member|admin] [--business-unit ID]… [--permission P]…
 *   token issue  --org ID --user ID [--name N] [--expires-at ISO-8601]
 *   token revoke --org ID --id ID
 *   api-key create --org ID [--name N] [--expires-at ISO-8601]
 *   api-key revoke --org ID --id ID
 *   cnam decide  --org ID (--approve [--detail NOTE] | --reject REASON)
 *                records the caller-ID registry's answer to the organization's registration in review
 *
 * Connection settings come from the environment (DATABASE_URL, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE)
 * or, when those are unset, from var/local-env.json written by `npm start`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { AppError, connectTemporal, createDb, currencyCode, emailSchema, ianaTimezone, idSchema, isUuid, migrate, permissionSchema, type Db } from '@rp/platform';
import { migrations } from '../migrations/index.js';
import { createUser, onboardOrganization } from './domain/accounts.js';
import { CnamDecisionError, decideCnamRegistration } from './domain/cnam.js';
import { issueCredential, revokeCredential } from './store/credentials.js';
import { credentialView } from './views/credentials.js';
import { getUser } from './store/users.js';
import { userView } from './views/users.js';
import { getOrganization, listOrganizations } from './store/organizations.js';
import { organizationView } from './views/organizations.js';
import { cnamRegistrationView } from './views/cnam.js';

class CliError extends Error {}

const USAGE = readFileSync(new URL(import.meta.url), 'utf8').split('*/')[0].replace(/^\/\*\*?\n?/, '').replace(/^ \* ?/gm, '');

function connectionEnv(): Record<string, string | undefined> {
  const local = path.resolve(process.cwd(), 'var', 'local-env.json');
  const defaults = !process.env.DATABASE_URL && existsSync(local) ? (JSON.parse(readFileSync(local, 'utf8')) as Record<string, string>) : {};
  const set = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v));
  const env: Record<string, string | undefined> = { ...defaults, ...set };
  if (!env.DATABASE_URL) throw new CliError('DATABASE_URL is not set (and no var/local-env.json from `npm start` was found).');
  return env;
}

function parse<T extends z.ZodRawShape>(shape: T, values: Record<string, unknown>): z.infer<z.ZodObject<T>> {
  const result = z.object(shape).safeParse(values);
  if (!result.success) {
    throw new CliError(result.error.issues.map((i) => `--${i.path.join('.').replace(/_/g, '-')}: ${i.message}`).join('; '));
  }
  return result.data;
}

const expiresAt = z.iso
  .datetime({ offset: true })
  .optional()
  .refine((v) => !v || new Date(v).getTime() > Date.now(), 'must be in the future');

export async function runCli(argv: string[], env: Record<string, string | undefined>): Promise<unknown> {
  const [group, action, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      org: { type: 'string' },
      user: { type: 'string' },
      id: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      currency: { type: 'string' },
      timezone: { type: 'string' },
      'admin-email': { type: 'string' },
      'admin-name': { type: 'string' },
      'business-unit': { type: 'string', multiple: true },
      permission: { type: 'string', multiple: true },
      'expires-at': { type: 'string' },
      approve: { type: 'boolean' },
      reject: { type: 'string' },
      detail: { type: 'string' },
    },
    strict: true,
  });
  const v = Object.fromEntries(Object.entries(values).map(([k, val]) => [k.replace(/-/g, '_'), val]));
  const command = `${group ?? ''} ${action ?? ''}`.trim();
  const known = ['org create', 'org list', 'user create', 'token issue', 'token revoke', 'api-key create', 'api-key revoke', 'cnam decide'];
  if (!known.includes(command)) throw new CliError(`unknown command "${command}"\n\n${USAGE}`);

  const db = createDb({ url: env.DATABASE_URL!, schema: 'admin', poolMax: 2, applicationName: 'admin-cli' });
  let temporal: Awaited<ReturnType<typeof connectTemporal>> | null = null;
  const needTemporal = command === 'org create' || command === 'user create' || command === 'cnam decide';
  try {
    await migrate(db, 'admin', migrations);
    if (needTemporal) {
      temporal = await connectTemporal({ address: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233', namespace: env.TEMPORAL_NAMESPACE ?? 'default' });
    }
    const requireOrg = async (id: string) => {
      if (!isUuid(id) || !(await getOrganization(db, id))) throw new CliError(`no organization ${id}`);
      return id;
    };
    switch (command) {
      case 'org create': {
        const a = parse(
          {
            name: z.string().min(1),
            admin_email: emailSchema(),
            admin_name: z.string().min(1),
            currency: currencyCode().default('USD'),
            timezone: ianaTimezone().default('UTC'),
          },
          v,
        );
        const o = await onboardOrganization(
          { db, temporal: temporal!.client },
          { name: a.name, base_currency: a.currency, timezone: a.timezone, admin: { email: a.admin_email, name: a.admin_name } },
        );
        return {
          organization: organizationView(o.organization),
          user: userView(o.user),
          organization_id: o.organization.id,
          user_id: o.user.id,
          access_token: o.accessToken.token,
          access_token_id: o.accessToken.row.id,
          api_key: o.apiKey.token,
          api_key_id: o.apiKey.row.id,
        };
      }
      case 'org list':
        return (await listOrganizations(db)).map(organizationView);
      case 'user create': {
        const a = parse(
          {
            org: z.string(),
            email: emailSchema(),
            name: z.string().min(1),
            role: z.enum(['admin', 'member']).default('member'),
            business_unit: z.array(idSchema()).default([]),
            permission: z.array(permissionSchema()).default([]),
          },
          v,
        );
        const org = await requireOrg(a.org);
        const user = await createUser({ db, temporal: temporal!.client }, org, {
          email: a.email,
          name: a.name,
          role: a.role,
          business_unit_ids: a.business_unit,
          permissions: a.permission,
        });
        return userView(user);
      }
      case 'token issue': {
        const a = parse({ org: z.string(), user: z.string(), name: z.string().min(1).default('cli token'), expires_at: expiresAt }, v);
        const org = await requireOrg(a.org);
        if (!isUuid(a.user) || !(await getUser(db, org, a.user))) throw new CliError(`no user ${a.user} in organization ${org}`);
        const { row, token } = await issueCredential(db, {
          organizationId: org,
          kind: 'user',
          userId: a.user,
          name: a.name,
          expiresAt: a.expires_at ? new Date(a.expires_at) : null,
        });
        return credentialView(row, token);
      }
      case 'api-key create': {
        const a = parse({ org: z.string(), name: z.string().min(1).default('cli key'), expires_at: expiresAt }, v);
        const org = await requireOrg(a.org);
        const { row, token } = await issueCredential(db, { organizationId: org, kind: 'api_key', name: a.name, expiresAt: a.expires_at ? new Date(a.expires_at) : null });
        return credentialView(row, token);
      }
      case 'token revoke':
      case 'api-key revoke': {
        const a = parse({ org: z.string(), id: z.string() }, v);
        const org = await requireOrg(a.org);
        const kind = command === 'token revoke' ? 'user' : 'api_key';
        const row = isUuid(a.id) ? await revokeCredential(db as Db, org, a.id, kind) : undefined;
        if (!row) throw new CliError(`no ${kind === 'user' ? 'access token' : 'API key'} ${a.id} in organization ${org}`);
        return credentialView(row);
      }
      case 'cnam decide': {
        const a = parse(
          {
            org: z.string(),
            approve: z.boolean().optional(),
            reject: z.string().trim().min(1, 'needs the registry\'s reason').max(2000).optional(),
            detail: z.string().trim().min(1).max(2000).optional(),
          },
          v,
        );
        if (Boolean(a.approve) === (a.reject !== undefined)) throw new CliError('give exactly one of --approve or --reject "reason"');
        if (a.reject !== undefined && a.detail !== undefined) throw new CliError('--detail goes with --approve; the reason of --reject is its value');
        const org = await requireOrg(a.org);
        try {
          const answer = a.approve ? { approved: true, detail: a.detail ?? null, source: 'cli' } : { approved: false, detail: a.reject!, source: 'cli' };
          return cnamRegistrationView((await decideCnamRegistration({ db, temporal: temporal!.client }, org, answer)).registration);
        } catch (err) {
          if (err instanceof CnamDecisionError) throw new CliError(err.message);
          throw err;
        }
      }
    }
    return null;
  } finally {
    await temporal?.close();
    await db.destroy();
  }
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname);
if (isMain) {
  try {
    const result = await runCli(process.argv.slice(2), connectionEnv());
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } catch (err) {
    const userError = err instanceof CliError || err instanceof AppError || Boolean((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'));
    const message = err instanceof AppError ? (err.detail ?? err.title) : userError ? (err as Error).message : `unexpected error: ${(err as Error).message}`;
    process.stderr.write(JSON.stringify({ error: message }) + '\n');
    process.exit(userError ? 2 : 1);
  }
}
