/** Webhooks in the domain layer: waking an endpoint's delivery and ensuring the dispatcher runs (for the API's routes and the worker). */
export { wakeWebhookEndpoint } from './wake.js';
export { ensureWebhookDispatcher } from './dispatcher.js';
