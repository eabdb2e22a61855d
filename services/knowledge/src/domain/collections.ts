/**
 * The playbook's knowledge collections (spec 2.12), in the order statistics report them. Articles,
 * proposals and extraction jobs all target one of these; the database enforces the same list.
 */
export const COLLECTIONS = ['cash_application', 'collections', 'company', 'credit_risk', 'deductions', 'disputes', 'payments'] as const;

export type Collection = (typeof COLLECTIONS)[number];

export const PROPOSAL_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

export const PROPOSAL_ACTIONS = ['archive', 'create', 'revise'] as const;
export type ProposalAction = (typeof PROPOSAL_ACTIONS)[number];
