/** Ports of the domain services' APIs in the local stack (the same as each service's PORT default). */
export const SERVICE_PORTS = {
  integrations: 8101,
  'cash-app': 8102,
  knowledge: 8103,
  admin: 8104,
} as const;

export type LocalServiceName = keyof typeof SERVICE_PORTS;

/** `LOCAL_<SERVICE>_PORT`, e.g. LOCAL_CASH_APP_PORT: the variable that moves a service's API port. */
export function servicePortVariable(name: string): string {
  return `LOCAL_${name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_PORT`;
}

/** SERVICE_PORTS with the LOCAL_<SERVICE>_PORT overrides of `env`. */
export function servicePorts(env: Record<string, string | undefined> = process.env): Record<LocalServiceName, number> {
  const ports = { ...SERVICE_PORTS } as Record<LocalServiceName, number>;
  for (const name of Object.keys(ports) as LocalServiceName[]) {
    const raw = env[servicePortVariable(name)];
    if (raw === undefined || raw === '') continue;
    const port = Number(raw);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${servicePortVariable(name)} must be a port number (got "${raw}")`);
    ports[name] = port;
  }
  return ports;
}
