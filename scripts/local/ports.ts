/**
 * Ports of the domain services' APIs in the local stack (the same as each service's PORT default);
 * LOCAL_<SERVICE>_PORT moves one (a second stack on this machine, the fault-injection suite).
 */
const port = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);

export const SERVICE_PORTS = {
  integrations: port('LOCAL_INTEGRATIONS_PORT', 8101),
  'cash-app': port('LOCAL_CASH_APP_PORT', 8102),
  knowledge: port('LOCAL_KNOWLEDGE_PORT', 8103),
  admin: port('LOCAL_ADMIN_PORT', 8104),
} as const;
