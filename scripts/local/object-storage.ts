/**
 * The object storage of the local stack and the tests: a real S3-compatible server (versitygw, built
 * once from its Go module by scripts/bootstrap.mjs) with its `posix` backend on a directory — every
 * bucket is a sub-directory, every object a file. Production passes S3_ENDPOINT and the S3_*
 * credentials instead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { findVersitygw, VERSITYGW_MODULE } from './versitygw.mjs';
import { listening, portOpen, startOnFreePorts, stopChild } from './components.js';
import { npmStartPort } from './ports.js';
import path from 'node:path';

export interface LocalObjectStorage {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  port: number;
  process: ChildProcess;
  stop: () => Promise<void>;
}

export async function startObjectStorage(opts: {
  /** Listen port; omitted: a free one. */
  port?: number;
  dataDir: string;
  accessKeyId: string;
  secretAccessKey: string;
  region?: string;
  logFile?: string;
  /** Own process group (the launcher's supervised components: Ctrl-C reaches only the launcher). */
  detached?: boolean;
}): Promise<LocalObjectStorage> {
  const bin = findVersitygw();
  if (!bin) throw new Error(`versitygw not found: run \`node scripts/bootstrap.mjs install\` (go install ${VERSITYGW_MODULE})`);
  mkdirSync(opts.dataDir, { recursive: true });
  const region = opts.region ?? 'us-east-1';
  return startOnFreePorts(
    1,
    async ([autoPort]) => {
      const port = opts.port ?? autoPort!;
      // Keys through the environment, not argv, so that they do not show in `ps`.
      const child = spawn(bin, ['--port', `127.0.0.1:${port}`, '--region', region, '--quiet', 'posix', opts.dataDir], {
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: opts.detached ?? false,
        env: { ...process.env, ROOT_ACCESS_KEY_ID: opts.accessKeyId, ROOT_SECRET_ACCESS_KEY: opts.secretAccessKey },
      });
      await listening(child, port, 'versitygw', 30_000, opts.logFile);
      return {
        endpoint: `http://127.0.0.1:${port}`,
        accessKeyId: opts.accessKeyId,
        secretAccessKey: opts.secretAccessKey,
        region,
        port,
        process: child,
        stop: () => stopChild(child),
      };
    },
    { fixed: opts.port !== undefined },
  );
}

/**
 * `npm start`'s object storage: S3_ENDPOINT and the S3_* variables when set (external), otherwise
 * versitygw on LOCAL_S3_PORT (default 7070) over var/s3 with root keys generated once and kept in
 * var/ like the other local secrets. Returns the S3_* variables every service gets.
 */
export async function objectStorageForStart(opts: {
  env: NodeJS.ProcessEnv;
  varDir: string;
  logDir: string;
  secret: (file: string) => string;
  /**
   * Runs the server under the launcher's supervisor (restarted on the same port and data directory
   * when it exits); `start` resolves once it listens.
   */
  supervise: (spec: { name: string; logFile: string; start: () => Promise<{ child: ChildProcess; stop: () => Promise<void> }> }) => Promise<void>;
}): Promise<{ env: Record<string, string>; line: string }> {
  const { env } = opts;
  const bucket = env.S3_BUCKET || 'receivables';
  if (env.S3_ENDPOINT) {
    const vars: Record<string, string> = { S3_ENDPOINT: env.S3_ENDPOINT, S3_BUCKET: bucket };
    for (const k of ['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_REGION'] as const) if (env[k]) vars[k] = env[k]!;
    return { env: vars, line: '  Object storage  external (S3_ENDPOINT)' };
  }
  const port = npmStartPort('LOCAL_S3_PORT', env);
  if (await portOpen(port)) {
    throw new Error(`port ${port} (object storage) is already in use — is another \`npm start\` running? Set LOCAL_S3_PORT to move it.`);
  }
  const accessKeyId = opts.secret('s3-access-key-id');
  const secretAccessKey = opts.secret('s3-secret-access-key');
  const logFile = path.join(opts.logDir, 'versitygw.log');
  let region = 'us-east-1';
  await opts.supervise({
    name: 'versitygw',
    logFile,
    start: async () => {
      const s3 = await startObjectStorage({ port, dataDir: path.join(opts.varDir, 's3'), accessKeyId, secretAccessKey, logFile, detached: true });
      region = s3.region;
      return { child: s3.process, stop: s3.stop };
    },
  });
  return {
    env: { S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_BUCKET: bucket, S3_ACCESS_KEY_ID: accessKeyId, S3_SECRET_ACCESS_KEY: secretAccessKey, S3_REGION: region },
    line: `  Object storage  versitygw (S3), port ${port}`,
  };
}
