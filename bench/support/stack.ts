/**
 * The in-process stack of a benchmark: every service API and the gateway on free ports over the
 * bench environment's settings (rate limit off), and an organization onboarded through admin's own
 * onboarding (its token calls the gateway).
 */
import { connectTemporal, createDb, startServiceApi, type CommonConfig, type RunningApi, type ServiceModule } from '@rp/platform';
import { onboardOrganization } from '@rp/admin';
import { loadGatewayConfig, startGateway, type ServiceName } from '@rp/api-gateway';
import { SERVICE_MODULES } from '../../scripts/local/services.js';

export interface BenchApis {
  apis: Partial<Record<ServiceName, RunningApi>>;
  gatewayUrl: string;
  /** Stops the gateway and the APIs started so far (never throws). */
  close(): Promise<void>;
}

/** Starts every service API, then the gateway routing to them. On a failure, what started is stopped. */
export async function startApisAndGateway(e: Record<string, string>): Promise<BenchApis> {
  const apis: Partial<Record<ServiceName, RunningApi>> = {};
  let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
  const close = async () => {
    await gateway?.close().catch(() => {});
    await Promise.allSettled(Object.values(apis).map((a) => a!.close()));
  };
  try {
    for (const [name, entry] of Object.entries(SERVICE_MODULES) as [ServiceName, (typeof SERVICE_MODULES)[ServiceName]][]) {
      apis[name] = await startServiceApi(entry.module as ServiceModule<CommonConfig, unknown>, entry.config(e), { port: 0 });
    }
    gateway = await startGateway(
      loadGatewayConfig({
        ...e,
        ADMIN_URL: `http://127.0.0.1:${apis.admin!.port}`,
        INTEGRATIONS_URL: `http://127.0.0.1:${apis.integrations!.port}`,
        CASH_APP_URL: `http://127.0.0.1:${apis['cash-app']!.port}`,
        KNOWLEDGE_URL: `http://127.0.0.1:${apis.knowledge!.port}`,
        RATE_LIMIT_PER_SECOND: '0',
      }),
      { port: 0 },
    );
  } catch (err) {
    await close();
    throw err;
  }
  return { apis, gatewayUrl: `http://127.0.0.1:${gateway.port}`, close };
}

/** A new EUR/UTC organization with one admin; its id and the admin's bearer token. */
export async function onboardBenchOrganization(e: Record<string, string>, name: string, email: string): Promise<{ orgId: string; token: string }> {
  const temporal = await connectTemporal({ address: e.TEMPORAL_ADDRESS!, namespace: e.TEMPORAL_NAMESPACE! });
  const adminDb = createDb({ url: e.DATABASE_URL!, schema: 'admin', poolMax: 1 });
  try {
    const org = await onboardOrganization({ db: adminDb, temporal: temporal.client }, { name, base_currency: 'EUR', timezone: 'UTC', admin: { email, name: 'Bench' } });
    return { orgId: org.organization.id, token: org.accessToken.token };
  } finally {
    await adminDb.destroy();
    await temporal.close();
  }
}
