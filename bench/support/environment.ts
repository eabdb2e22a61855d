/** Real components for a benchmark run: embedded Postgres, Temporal dev server, one database and namespace. */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { connectTemporal, ensureNamespace } from '@rp/platform';
import { startEmbeddedPostgres, startTemporalDevServer } from '../../scripts/local/components.js';

export interface BenchEnvironment {
  env: Record<string, string>;
  stop: () => Promise<void>;
}

export async function startBenchEnvironment(name: string): Promise<BenchEnvironment> {
  const root = path.resolve('var', 'bench', `${name}-${process.pid}`);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const [postgres, temporal] = await Promise.all([
    startEmbeddedPostgres({ dataDir: path.join(root, 'pg'), persistent: false }),
    startTemporalDevServer({ uiPort: null, dbFile: null, logFile: path.join(root, 'temporal.log') }),
  ]);
  const admin = new pg.Client({ connectionString: postgres.url('postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE bench');
  await admin.end();
  const t = await connectTemporal({ address: temporal.address, namespace: 'bench' });
  await ensureNamespace(t.connection, 'bench');
  await t.close();
  return {
    env: {
      DATABASE_URL: postgres.url('bench'),
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: 'bench',
      IDENTITY_SECRET: 'bench-identity-secret-0123456789abcdef012345',
      CONNECTION_SECRETS_KEY: Buffer.from('bench-connection-secrets-key-012').toString('base64'),
      LOG_LEVEL: 'silent',
      SMTP_URL: 'smtp://127.0.0.1:1',
    },
    stop: async () => {
      await temporal.stop();
      await postgres.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
