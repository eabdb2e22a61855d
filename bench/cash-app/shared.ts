/**
 * What the cash-app cases share: every service API and the gateway in child processes, and the
 * median and rounding of the figures they report.
 */
import type { ServiceName } from '@rp/api-gateway';
import { SERVICE_MODULES } from '../../scripts/local/services.js';
import { serveInChild } from '../support/process.js';

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
export const round1 = (x: number) => Math.round(x * 10) / 10;

/**
 * Every service's API and the gateway in front of them, each in its own process as deployed
 * (docker-compose.yml: one container per service API), rate limit off; `gatewayEnv` adds gateway
 * settings. Each server's stop goes into `stops` as it starts, so the caller's clean-up stops what
 * started. Its own process matters for what is measured: the answer's serialization (cash-app), its
 * proxying (gateway) and its reading (this process) run on their own event loops, as in production.
 */
export async function startApisAndGateway(e: Record<string, string>, stops: Array<() => Promise<void>>, gatewayEnv: Record<string, string>): Promise<{ port: number }> {
  const ports = {} as Record<ServiceName, number>;
  for (const name of Object.keys(SERVICE_MODULES) as ServiceName[]) {
    const api = await serveInChild(`${name}-api`, e);
    stops.push(api.stop);
    ports[name] = api.port;
  }
  const gateway = await serveInChild('gateway', {
    ...e,
    ADMIN_URL: `http://127.0.0.1:${ports.admin}`,
    INTEGRATIONS_URL: `http://127.0.0.1:${ports.integrations}`,
    CASH_APP_URL: `http://127.0.0.1:${ports['cash-app']}`,
    KNOWLEDGE_URL: `http://127.0.0.1:${ports.knowledge}`,
    RATE_LIMIT_PER_SECOND: '0',
    ...gatewayEnv,
  });
  stops.push(gateway.stop);
  return { port: gateway.port };
}
