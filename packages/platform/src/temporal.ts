import { Client, Connection } from '@temporalio/client';
import Long from 'long';

export interface TemporalOptions {
  address: string;
  namespace: string;
  tls?: boolean;
}

export interface TemporalHandle {
  client: Client;
  connection: Connection;
  close: () => Promise<void>;
}

/**
 * gRPC channel arguments of every client connection to Temporal. grpc-js waits 1 s before it
 * reconnects a lost channel, ×1.6 per failed attempt up to 120 s: after a minute-long Temporal
 * outage the next attempt could be almost two minutes away, and until then every call (and
 * /readyz) failed although Temporal was back. 250 ms up to 2 s notices it within about 2 s.
 */
export const TEMPORAL_CHANNEL_ARGS = {
  'grpc.initial_reconnect_backoff_ms': 250,
  'grpc.max_reconnect_backoff_ms': 2000,
} as const;

export async function connectTemporal(opts: TemporalOptions): Promise<TemporalHandle> {
  const connection = await Connection.connect({ address: opts.address, tls: opts.tls ? {} : undefined, channelArgs: { ...TEMPORAL_CHANNEL_ARGS } });
  const client = new Client({ connection, namespace: opts.namespace });
  return { client, connection, close: () => connection.close() };
}

/**
 * Readiness probe: one GetSystemInfo call bounded by a gRPC deadline (the SDK's retry interceptor
 * would otherwise keep retrying it in the background after the probe gave up).
 */
export async function checkTemporal(connection: Connection, timeoutMs = 1500): Promise<void> {
  await connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({}));
}

/** Custom search attributes every workflow of the platform carries, so operators find them in the Web UI. */
export const SEARCH_ATTRIBUTES = { OrganizationId: 'Keyword', EntityId: 'Keyword' } as const;

/**
 * Register the namespace (when missing) and the platform's search attributes. Idempotent; used by
 * the local stack and the test harness (a real cluster's namespace is provisioned by its operators).
 */
export async function ensureNamespace(connection: Connection, namespace: string): Promise<void> {
  const ws = connection.workflowService;
  try {
    await ws.describeNamespace({ namespace });
  } catch {
    try {
      await ws.registerNamespace({ namespace, workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(3 * 24 * 3600) } });
    } catch (err) {
      if (!/already exists|AlreadyExists/i.test(String((err as Error).message))) throw err;
    }
  }
  // A freshly registered namespace takes a moment to reach every frontend cache.
  const existing = await retry(() => connection.operatorService.listSearchAttributes({ namespace }));
  const missing = Object.keys(SEARCH_ATTRIBUTES).filter((k) => !(k in (existing.customAttributes ?? {})));
  if (missing.length) {
    await retry(() =>
      connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((k) => [k, 2 /* INDEXED_VALUE_TYPE_KEYWORD */])),
      }),
    );
  }
}

async function retry<T>(fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline || !/NOT_FOUND|UNAVAILABLE/.test(String((err as Error).message))) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
