/** The attachment pool's worker module (see attachment-text-pool.ts): reads one attachment's text on a kernel worker thread. */
import { attachmentText } from './attachment-text.js';

export const ops = { read: attachmentText };
