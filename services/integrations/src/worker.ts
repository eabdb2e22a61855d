/**
 * The integrations worker process: the service's Temporal activities on its task queue.
 */
import { runProcess, startServiceWorker } from '@rp/platform';
import { workflowsPath } from '@rp/workflows/paths';
import { integrationsModule } from './module.js';
import { loadIntegrationsConfig } from './config.js';

await runProcess('integrations-worker', async () => startServiceWorker(integrationsModule, loadIntegrationsConfig(), { workflowsPath }));
