import { adminModule, loadAdminConfig } from '@rp/admin';
import { cashAppModule, loadCashAppConfig } from '@rp/cash-app';
import { integrationsModule, loadIntegrationsConfig } from '@rp/integrations';
import { knowledgeModule, loadKnowledgeConfig } from '@rp/knowledge';
import type { ServiceName } from '@rp/api-gateway';
import type { CommonConfig } from '@rp/platform';

/** Every domain service with its module and config loader; a new service is added here once. */
export const SERVICE_MODULES: Record<ServiceName, { module: unknown; config: (env: Record<string, string>) => CommonConfig }> = {
  admin: { module: adminModule, config: loadAdminConfig },
  integrations: { module: integrationsModule, config: loadIntegrationsConfig },
  'cash-app': { module: cashAppModule, config: loadCashAppConfig },
  knowledge: { module: knowledgeModule, config: loadKnowledgeConfig },
};
