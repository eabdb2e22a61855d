/**
 * Caller-ID name (CNAM) registries, behind one interface. A registry is whatever files the display
 * name against the organization's number (a carrier's CNAM portal, a trust-hub API, …).
 *
 * The platform ships one adapter, `operator`: it is connected to no registry. It records the
 * submission (its snapshot is kept in `cnam_submissions`) for an operator, who files it with the
 * registry by hand and records the registry's answer with `npm run cli -- cnam decide`. It answers
 * `in_review` and never approves or rejects anything itself.
 */
export interface CnamSubmission {
  /** idempotency key: the same submission handed over twice must be filed once */
  submissionId: string;
  organizationId: string;
  registrationId: string;
  /** the registration's fields as submitted */
  payload: Record<string, unknown>;
}

export type CnamRegistryOutcome =
  | { status: 'in_review'; registryReference: string | null }
  | { status: 'approved' | 'rejected'; detail: string | null; registryReference: string | null };

export interface CnamRegistryAdapter {
  /** stored on each submission */
  readonly name: string;
  /** Files the submission. Throws on a technical failure (the activity records it and Temporal retries). */
  submit(submission: CnamSubmission): Promise<CnamRegistryOutcome>;
}

export const operatorRegistryAdapter: CnamRegistryAdapter = {
  name: 'operator',
  async submit() {
    // Nothing is sent anywhere: the snapshot in cnam_submissions is the record the operator works from.
    return { status: 'in_review', registryReference: null };
  },
};
