import { adminModule, loadAdminConfig } from '@rp/admin';
import type { ServiceName } from '@rp/api-gateway';

/** Every domain service with its module and config loader; a new service is added here once. */
export const SERVICE_MODULES: Record<ServiceName, { module: unknown; config: (env: Record<string, string>) => any }> = {
  admin: { module: adminModule, config: loadAdminConfig },
  integrations: { module: adminModule, config: loadAdminConfig },
  'cash-app': { module: adminModule, config: loadAdminConfig },
  knowledge: { module: adminModule, config: loadAdminConfig },
};
