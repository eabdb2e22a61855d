import { runProcess, startServiceWorker } from '@rp/platform';
import { workflowsPath } from '@rp/workflows/paths';
import { knowledgeModule } from './module.js';
import { loadKnowledgeConfig } from './config.js';

await runProcess('knowledge-worker', async () => startServiceWorker(knowledgeModule, loadKnowledgeConfig(), { workflowsPath }));
