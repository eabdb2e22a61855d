/** Ports of the domain services' APIs in the local stack (the same as each service's PORT default). */
export const SERVICE_PORTS = {
  integrations: 8101,
  'cash-app': 8102,
  knowledge: 8103,
  admin: 8104,
} as const;
