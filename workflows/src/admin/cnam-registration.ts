import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import { activityOptions, type RetryWindowInput } from '../activity-options.js';
import { TASK_QUEUES } from '../task-queues.js';

export const CNAM_REGISTRATION_TASK_QUEUE = TASK_QUEUES.admin;

/** One workflow per submission of a registration: `cnam-registration-<submission id>`. */
export function cnamRegistrationWorkflowId(submissionId: string): string {
  return `cnam-registration-${submissionId}`;
}

export interface CnamRegistrationInput extends RetryWindowInput {
  organizationId: string;
  registrationId: string;
  submissionId: string;
}

/** The registry's answer, recorded by an operator (`npm run cli -- cnam decide`) or an adapter. */
export interface CnamRegistryAnswer {
  approved: boolean;
  /** rejection reason or approval note; becomes the registration's status_detail */
  detail: string | null;
  /** who recorded it, for the submission's record (e.g. `cli`) */
  source: string;
}

export const cnamRegistryAnswerSignal = defineSignal<[CnamRegistryAnswer]>('cnamRegistryAnswer');

export type CnamSubmitResult =
  | { status: 'in_review'; registryReference: string | null }
  | { status: 'approved' | 'rejected'; detail: string | null }
  /** the registration was edited and submitted again (or removed) before this submission was handed over */
  | { status: 'superseded' }
  /** the submitting transaction never committed */
  | { status: 'missing' };

export type CnamRegistrationResult = { status: 'approved' | 'rejected'; detail: string | null } | { status: 'superseded' } | { status: 'missing' };

/** Activity contract, implemented by services/admin (createCnamRegistrationActivities). */
export interface CnamRegistrationActivities {
  /** Hands the submission to the registry adapter once and records its answer (in_review, or a final one). */
  submitCnamRegistration(input: CnamRegistrationInput): Promise<CnamSubmitResult>;
  /** Records the registry's final answer on the submission and, if it is still the current one, on the registration. */
  recordCnamDecision(input: CnamRegistrationInput & CnamRegistryAnswer): Promise<CnamRegistrationResult>;
}

/**
 * The platform's retry policy (activity-options.ts): outages of our own infrastructure and a registry
 * that cannot be reached are retried with backoff (up to 5 minutes apart) for the retry window.
 */
function activities(input: CnamRegistrationInput) {
  return proxyActivities<CnamRegistrationActivities>(
    activityOptions({ startToCloseTimeout: '1 minute', initialInterval: '2 seconds', maximumInterval: '5 minutes', retryWindowMinutes: input.retryWindowMinutes }),
  );
}

/**
 * A registration's submission: the adapter hands it to the registry (the default adapter records it
 * for an operator and answers `in_review`); the workflow then waits for the registry's answer as
 * the `cnamRegistryAnswer` signal and records it. An answer signalled early is kept.
 */
export async function cnamRegistration(input: CnamRegistrationInput): Promise<CnamRegistrationResult> {
  let answer: CnamRegistryAnswer | undefined;
  setHandler(cnamRegistryAnswerSignal, (a) => {
    answer ??= a;
  });
  const { submitCnamRegistration, recordCnamDecision } = activities(input);
  const submitted = await submitCnamRegistration(input);
  if (submitted.status === 'superseded' || submitted.status === 'missing') return submitted;
  if (submitted.status === 'approved' || submitted.status === 'rejected') return submitted;
  await condition(() => answer !== undefined);
  return await recordCnamDecision({ ...input, ...answer! });
}
