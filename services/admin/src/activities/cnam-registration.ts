/** Activities of the caller-ID name registration workflow: hand the submission to the registry adapter and record its answer. */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Db, Logger } from '@rp/platform';
import type { CnamRegistrationActivities, CnamRegistrationInput, CnamRegistrationResult, CnamSubmitResult } from '@rp/workflows';
import type { CnamRegistryAdapter } from '../adapters/cnam-registry.js';
import { getCnamSubmission, lockCnamRegistrationById, markSubmissionSuperseded, recordDecision, recordHandOver, recordSubmissionError } from '../store/cnam.js';

export interface CnamRegistrationDeps {
  db: Db;
  log: Logger;
  registry: CnamRegistryAdapter;
}

/**
 * The submission's two steps. Both lock the registration and act only while the submission is
 * still the registration's current one; each is safe to run again (an attempt retried after its
 * write committed finds the write done).
 */
export function createCnamRegistrationActivities(deps: CnamRegistrationDeps): CnamRegistrationActivities {
  return {
    async submitCnamRegistration(input: CnamRegistrationInput): Promise<CnamSubmitResult> {
      const log = deps.log.child({ organization_id: input.organizationId, submission_id: input.submissionId, activity: 'submitCnamRegistration' });
      const sub = await getCnamSubmission(deps.db, input.organizationId, input.submissionId);
      if (!sub) {
        // Started inside the submitting transaction: give it a few attempts to commit.
        if (Context.current().info.attempt < 4) throw ApplicationFailure.retryable('submission not visible yet', 'SubmissionNotFound');
        return { status: 'missing' };
      }
      if (sub.status === 'superseded') return { status: 'superseded' };
      if (sub.status === 'in_review') return { status: 'in_review', registryReference: sub.registry_reference };
      if (sub.status === 'approved' || sub.status === 'rejected') return { status: sub.status, detail: sub.decision_detail };

      let outcome;
      try {
        outcome = await deps.registry.submit({ submissionId: sub.id, organizationId: sub.organization_id, registrationId: sub.registration_id, payload: sub.payload });
      } catch (err) {
        await recordSubmissionError(deps.db, sub, `registry ${deps.registry.name}: ${(err as Error).message}`);
        log.warn({ err, adapter: deps.registry.name }, 'CNAM registry submission failed; Temporal will retry');
        throw err;
      }
      return deps.db.transaction(async (trx): Promise<CnamSubmitResult> => {
        const reg = await lockCnamRegistrationById(trx, sub.organization_id, sub.registration_id);
        if (!reg || reg.current_submission_id !== sub.id) {
          await markSubmissionSuperseded(trx, sub.id);
          return { status: 'superseded' };
        }
        await recordHandOver(trx, sub, deps.registry.name, outcome);
        log.info({ adapter: deps.registry.name, status: outcome.status }, 'CNAM registration handed to the registry');
        return outcome.status === 'in_review' ? outcome : { status: outcome.status, detail: outcome.detail };
      });
    },

    async recordCnamDecision(input): Promise<CnamRegistrationResult> {
      return deps.db.transaction(async (trx): Promise<CnamRegistrationResult> => {
        const reg = await lockCnamRegistrationById(trx, input.organizationId, input.registrationId);
        const sub = await getCnamSubmission(trx, input.organizationId, input.submissionId, { forUpdate: true });
        if (!sub) return { status: 'missing' };
        if (sub.status === 'approved' || sub.status === 'rejected') return { status: sub.status, detail: sub.decision_detail };
        if (!reg || reg.current_submission_id !== sub.id) {
          await markSubmissionSuperseded(trx, sub.id);
          return { status: 'superseded' };
        }
        await recordDecision(trx, sub, input.approved, input.detail);
        deps.log.info(
          { organization_id: input.organizationId, submission_id: sub.id, approved: input.approved, source: input.source },
          'CNAM registry answer recorded',
        );
        return { status: input.approved ? 'approved' : 'rejected', detail: input.detail };
      });
    },
  };
}
