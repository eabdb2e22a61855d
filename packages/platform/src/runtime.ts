import http from 'node:http';
import type { EventDeclaration } from './events/declare.js';
import { eventRetentionActivities, type RetainedRows } from './events/retention.js';
import type { AddressInfo } from 'node:net';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createDb, migrate, type Db, type Migration } from './db.js';
import { createServiceApp, type ServiceApp } from './http/service.js';
import { closeServer, listen } from './http/listen.js';
import type { OpenApiInfo } from './http/openapi.js';
import type { RouteDef } from './http/route.js';
import { createLogger } from './logger.js';
import { checkTemporal, connectTemporal, type TemporalHandle } from './temporal.js';
import { ConfigError, type CommonConfig } from './config.js';
import { classifyActivityErrors, isTransientInfraError } from './failures.js';

/** What each domain service contributes; the runtime wires it to Postgres, Temporal and HTTP. */
export interface ServiceModule<C extends CommonConfig, D> {
  name: string;
  /** Postgres schema the service owns. */
  schema: string;
  taskQueue: string;
  info: OpenApiInfo;
  migrations: Migration[];
  routes: RouteDef<D>[];
  /** Event types the service records (kernel events/), rendered as the OpenAPI `webhooks`. */
  events?: EventDeclaration[];
  /** Rows the worker's `pruneOwnEvents` deletes with the service's events at the retention (events/retention.ts). */
  retained?: RetainedRows[];
  /** Idempotent start-up work of the worker before it polls (e.g. a Temporal Schedule the service owns). */
  onWorkerStart?(base: BaseDeps<C>): Promise<void>;
  deps(base: BaseDeps<C>): D | Promise<D>;
  /** Releases what `deps` opened beyond the database and Temporal (e.g. a cache's listener connection) when the API stops. */
  closeDeps?(deps: D): Promise<void>;
  activities(base: BaseDeps<C>): object | Promise<object>;
  /**
   * Activities served on task queues of their own by the same worker process (no workflows there):
   * long-running activities (e.g. webhook delivery) then never take the slots the service's other
   * activities need, nor the other way round.
   */
  activityQueues?(base: BaseDeps<C>): { taskQueue: string; activities: object }[];
  /**
   * Worker options of the service's worker. Heartbeat throttling: the SDK sends an activity's
   * heartbeats at most every 0.8 × heartbeatTimeout (defaultHeartbeatThrottleInterval when the
   * activity has none), capped at maxHeartbeatThrottleInterval, and a cancellation reaches the
   * activity only with a heartbeat's answer; lower these where a cancellation must be seen quickly.
   * maxConcurrentActivityTaskExecutions: the SDK's default (100) unless a module needs fewer.
   */
  worker?: Pick<WorkerOptions, 'maxHeartbeatThrottleInterval' | 'defaultHeartbeatThrottleInterval' | 'maxConcurrentActivityTaskExecutions'>;
}

export interface BaseDeps<C extends CommonConfig> {
  config: C;
  db: Db;
  temporal: TemporalHandle;
  log: Logger;
}

export interface RunningApi {
  port: number;
  server: http.Server;
  app: ServiceApp;
  /** what the route handlers receive (the module's `deps`) */
  deps: unknown;
  close: () => Promise<void>;
}

async function base<C extends CommonConfig>(mod: ServiceModule<C, unknown>, config: C, role: string): Promise<BaseDeps<C>> {
  const log = createLogger(`${mod.name}-${role}`, config.LOG_LEVEL);
  // Migrations on a pool of their own, without the statement deadline (a migration may run long).
  const migrator = createDb({ url: config.DATABASE_URL, schema: mod.schema, poolMax: 2, applicationName: `${mod.name}-${role}-migrate` });
  try {
    await migrate(migrator, mod.schema, mod.migrations);
  } finally {
    await migrator.destroy();
  }
  const db = createDb({
    url: config.DATABASE_URL,
    schema: mod.schema,
    poolMax: config.DATABASE_POOL_MAX,
    applicationName: `${mod.name}-${role}`,
    statementTimeoutMs: role === 'api' ? config.DATABASE_STATEMENT_TIMEOUT_MS : config.DATABASE_WORKER_STATEMENT_TIMEOUT_MS,
  });
  const temporal = await connectTemporal({ address: config.TEMPORAL_ADDRESS, namespace: config.TEMPORAL_NAMESPACE, tls: config.TEMPORAL_TLS });
  return { config, db, temporal, log };
}

/** Start a service's HTTP API: migrations first, then listen. */
export async function startServiceApi<C extends CommonConfig, D>(
  mod: ServiceModule<C, D>,
  config: C,
  opts: { port: number; host?: string },
): Promise<RunningApi> {
  const b = await base(mod as ServiceModule<C, unknown>, config, 'api');
  const deps = await mod.deps(b);
  const app = createServiceApp<D>({
    name: mod.name,
    info: mod.info,
    routes: mod.routes,
    events: mod.events,
    deps,
    log: b.log,
    identitySecret: config.IDENTITY_SECRET,
    identityMaxAgeSeconds: config.IDENTITY_MAX_AGE_SECONDS,
    metricsToken: config.METRICS_TOKEN ?? null,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    readiness: [
      { name: 'database', check: async () => void (await b.db.raw('select 1')) },
      { name: 'temporal', check: () => checkTemporal(b.temporal.connection) },
    ],
  });
  const { server, port } = await listen(app.app, opts.port, opts.host);
  b.log.info({ port }, `${mod.name} API listening`);
  return {
    port,
    server,
    app,
    deps,
    close: async () => {
      await closeServer(server);
      await mod.closeDeps?.(deps);
      await b.temporal.close();
      await b.db.destroy();
    },
  };
}

export interface RunningWorker {
  worker: Worker;
  /** port of the health server (WORKER_HEALTH_PORT), or null */
  healthPort: number | null;
  /** resolves when the worker has shut down */
  done: Promise<void>;
  close: () => Promise<void>;
}

/**
 * Start a service's Temporal worker on its task queue. Uses a prebuilt workflow bundle when
 * WORKFLOW_BUNDLE_PATH is set (production, tests), else bundles the workflow sources on start.
 */
export async function startServiceWorker<C extends CommonConfig, D>(
  mod: ServiceModule<C, D>,
  config: C,
  opts: { workflowsPath: string; workflowBundlePath?: string },
): Promise<RunningWorker> {
  const b = await base(mod as ServiceModule<C, unknown>, config, 'worker');
  const activities = {
    ...(await mod.activities(b)),
    // every service prunes its own schema's events on its own task queue (events/retention.ts)
    ...eventRetentionActivities({ db: b.db, retentionDays: config.EVENT_RETENTION_DAYS, also: mod.retained }),
  };
  await mod.onWorkerStart?.(b);
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS, tls: config.TEMPORAL_TLS ? {} : undefined });
  const bundlePath = opts.workflowBundlePath ?? process.env.WORKFLOW_BUNDLE_PATH;
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: mod.taskQueue,
    activities,
    ...mod.worker,
    // Every activity's outage errors become retryable `TransientInfraError`s (./failures.ts).
    interceptors: { activity: [classifyActivityErrors] },
    ...(bundlePath ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath: opts.workflowsPath }),
  });
  const queues = await Promise.all(
    (mod.activityQueues?.(b) ?? []).map((q) =>
      Worker.create({ connection, namespace: config.TEMPORAL_NAMESPACE, taskQueue: q.taskQueue, activities: q.activities, interceptors: { activity: [classifyActivityErrors] } }),
    ),
  );
  // The service's queue and its activity queues run and stop together.
  const stopAll = () => {
    for (const w of [worker, ...queues]) if (w.getState() === 'RUNNING') w.shutdown();
  };
  const done = Promise.all([worker, ...queues].map((w) => w.run().finally(stopAll)))
    .then(() => undefined)
    .finally(async () => {
      await connection.close().catch(() => {});
    });
  b.log.info({ taskQueue: mod.taskQueue }, `${mod.name} worker polling`);
  const health = config.WORKER_HEALTH_PORT ? await startWorkerHealth(config.WORKER_HEALTH_PORT, worker, b, `${mod.name}-worker`) : null;
  return {
    worker,
    done,
    healthPort: health ? (health.address() as AddressInfo).port : null,
    close: async () => {
      if (health) await closeServer(health);
      stopAll();
      await done.catch(() => {});
      await b.temporal.close();
      await b.db.destroy();
    },
  };
}

/**
 * A worker's health server (WORKER_HEALTH_PORT), for container healthchecks: GET /healthz answers
 * 200 while the worker runs (state RUNNING); GET /readyz also needs PostgreSQL and Temporal to
 * answer (1.5 s each), else 503 naming the failing check. Nothing else is served.
 */
async function startWorkerHealth<C extends CommonConfig>(port: number, worker: Worker, b: BaseDeps<C>, service: string): Promise<http.Server> {
  const timeout = <T>(p: Promise<T>) =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 1500).unref())]);
  const check = (p: () => Promise<unknown>) =>
    timeout(p()).then(
      () => 'ok',
      () => 'unavailable',
    );
  const server = http.createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '').split('?')[0];
      const state = worker.getState();
      const running = state === 'RUNNING' ? 'ok' : state.toLowerCase();
      let status: number;
      let body: object;
      if (req.method !== 'GET' || (path !== '/healthz' && path !== '/readyz')) {
        status = 404;
        body = { type: 'not-found', status: 404, title: 'Not found', detail: 'Only GET /healthz and GET /readyz are served here.' };
      } else if (path === '/healthz') {
        status = running === 'ok' ? 200 : 503;
        body = { status: running === 'ok' ? 'ok' : 'not-running', service, checks: { worker: running } };
      } else {
        const [database, temporal] = await Promise.all([check(() => b.db.raw('select 1')), check(() => checkTemporal(b.temporal.connection))]);
        const ok = running === 'ok' && database === 'ok' && temporal === 'ok';
        status = ok ? 200 : 503;
        body = { status: ok ? 'ready' : 'not-ready', service, checks: { worker: running, database, temporal } };
      }
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, process.env.HOST ?? '127.0.0.1', () => resolve());
  });
  b.log.info({ port }, 'worker health server listening');
  return server;
}

/**
 * A process entry point: start it, stop it gracefully on SIGINT/SIGTERM. A bad configuration stops
 * start-up with the message naming each bad variable (exit 2); any other start-up failure exits 1.
 * Unhandled promise rejections: see survivesInfraRejections.
 */
export async function runProcess(name: string, start: () => Promise<{ close: () => Promise<void> }>): Promise<void> {
  survivesInfraRejections(createLogger(name, process.env.LOG_LEVEL ?? 'info'));
  try {
    const running = await start();
    onShutdown(createLogger(name, process.env.LOG_LEVEL ?? 'info'), running.close);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${name}: ${err.message}\n`);
      process.exit(2);
    }
    createLogger(name).fatal({ err }, 'start-up failed');
    process.exit(1);
  }
}

/** Graceful shutdown on SIGINT/SIGTERM for a process entry point. */
export function onShutdown(log: Logger, close: () => Promise<void>): void {
  let closing = false;
  const handler = (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    close().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

/**
 * How a process entry point treats a promise rejection nobody handled (Node 20 would end the process
 * on any). An outage must not crash a service: a rejection that is a transient infrastructure
 * failure (isTransientInfraError: PostgreSQL or Temporal gone, a connection reset, a statement past
 * its deadline) is logged as a warning and the process goes on; the work it belonged to has failed
 * already and is retried by its caller, a client or Temporal. (Seen: under knex, a transaction whose
 * connection died during a PostgreSQL restart left its ROLLBACK's rejection unhandled.) Any other
 * unhandled rejection is a defect: it is logged as fatal and the process exits 1, as Node would, for
 * its supervisor (npm start, docker compose) to restart it in a known state.
 */
export function survivesInfraRejections(log: Logger): void {
  process.on('unhandledRejection', (reason) => {
    if (isTransientInfraError(reason)) {
      log.warn({ err: reason }, 'unhandled rejection of an infrastructure failure; the process goes on');
      return;
    }
    log.fatal({ err: reason }, 'unhandled rejection (a defect); exiting');
    process.exit(1);
  });
}
