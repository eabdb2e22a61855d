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

/**
 * Every fixed port `npm start` listens on by default, each with the variable that moves it: tests
 * that run `npm start`'s launcher set every one of these variables to a free port, so a newcomer's
 * running `npm start` never collides with `npm test`.
 */
export const NPM_START_PORTS: readonly { variable: string; port: number; what: string }[] = [
  { variable: 'PORT', port: 8080, what: 'API gateway' },
  { variable: 'LOCAL_PG_PORT', port: 5433, what: 'PostgreSQL' },
  { variable: 'LOCAL_TEMPORAL_PORT', port: 7233, what: 'Temporal' },
  { variable: 'LOCAL_TEMPORAL_UI_PORT', port: 8233, what: 'Temporal Web UI' },
  { variable: 'LOCAL_SMTP_PORT', port: 1025, what: 'SMTP (MailDev)' },
  { variable: 'LOCAL_MAIL_WEB_PORT', port: 1080, what: 'mail inbox (MailDev)' },
  { variable: 'LOCAL_S3_PORT', port: 7070, what: 'object storage' },
  { variable: 'LOCAL_SMS_PORT', port: 1090, what: 'SMS sink' },
  { variable: 'LOCAL_INBOUND_SMTP_PORT', port: 2525, what: 'inbound SMTP (admin API process)' },
  ...Object.entries(SERVICE_PORTS).map(([name, port]) => ({ variable: servicePortVariable(name), port, what: `${name} API` })),
];

/** The port of `variable` in `env`, else its `npm start` default ({@link NPM_START_PORTS}). */
export function npmStartPort(variable: string, env: Record<string, string | undefined> = process.env): number {
  const fixed = NPM_START_PORTS.find((p) => p.variable === variable);
  if (!fixed) throw new Error(`${variable} is not a port of npm start`);
  const raw = env[variable];
  return raw === undefined || raw === '' ? fixed.port : Number(raw);
}
