/** The knowledge worker process: the playbook-extraction activities on the knowledge task queue, then the pipeline's threads on shutdown. */
import { runProcess, startServiceWorker } from '@rp/platform';
import { workflowsPath } from '@rp/workflows/paths';
import { knowledgeModule } from './module.js';
import { loadKnowledgeConfig } from './config.js';
import { closeSharedPipelinePool } from './activities/pipeline-pool.js';

await runProcess('knowledge-worker', async () => {
  const worker = await startServiceWorker(knowledgeModule, loadKnowledgeConfig(), { workflowsPath });
  return {
    ...worker,
    close: async () => {
      await worker.close(); // finish the running activities
      await closeSharedPipelinePool(); // then stop the pipeline's threads
    },
  };
});
