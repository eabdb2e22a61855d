/** Starts the admin service's Temporal worker on its task queue. */
import { runProcess, startServiceWorker } from '@rp/platform';
import { workflowsPath } from '@rp/workflows/paths';
import { adminModule } from './module.js';
import { loadAdminConfig } from './config.js';

await runProcess('admin-worker', async () => startServiceWorker(adminModule, loadAdminConfig(), { workflowsPath }));
