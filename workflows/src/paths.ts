import { fileURLToPath } from 'node:url';

/** Source entry of the workflow bundle (development workers bundle it on start). */
export const workflowsPath = fileURLToPath(new URL('./workflows.ts', import.meta.url));
