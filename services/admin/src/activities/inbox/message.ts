/** Activities of the inbox workflow (contract workflows/src/admin/inbox-message.ts): process, finish, fail. */
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Db, Logger, ObjectStorage } from '@rp/platform';
import type { InboxMessageActivities } from '@rp/workflows';
import { failMessage, finishMessage, processMessage } from '../../domain/inbox/process.js';

export interface InboxMessageDeps {
  db: Db;
  storage: ObjectStorage | null;
  log: Logger;
  temporal: Client;
}

/** postal-mime's refusals of a message's structure (nesting or header limits): retrying reads the same bytes. */
function isUnreadable(err: unknown): boolean {
  const m = err instanceof Error ? err.message : '';
  return /nesting depth|headers? size|Maximum .* exceeded/i.test(m);
}

export function createInboxMessageActivities(deps: InboxMessageDeps): InboxMessageActivities {
  return {
    async processInboxMessage(input) {
      try {
        return await processMessage(deps, input);
      } catch (err) {
        if (isUnreadable(err)) throw ApplicationFailure.nonRetryable(`The message could not be parsed: ${(err as Error).message}`, 'UnreadableMessage');
        throw err;
      }
    },
    async finishInboxMessage(input) {
      await finishMessage(deps, input);
    },
    async failInboxMessage(input) {
      await failMessage(deps, input);
    },
  };
}
