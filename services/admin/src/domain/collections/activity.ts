/**
 * A customer's timeline (GET /v2/partners/{partner_id}/activity): what was sent to, agreed with or
 * received from one customer, newest first. The customer must be the organization's and within
 * the caller's business units (the ledger partner's unit, as everywhere): else 404, so a member
 * learns nothing of a customer outside their units.
 */
import { getPartner, NotFoundError, type Db, type Identity, type PageRequest, type PartnerActivityType } from '@rp/platform';
import * as store from '../../store/collections/activity.js';

export async function partnerActivity(deps: { db: Db }, identity: Identity, partnerId: string, types: readonly PartnerActivityType[] | undefined, page: PageRequest) {
  const partner = await getPartner(deps.db, identity.org, partnerId, identity.bu);
  if (!partner) throw new NotFoundError(`No partner ${partnerId}.`);
  return store.partnerActivityPage(deps.db, identity.org, partnerId, types, page.offset, page.pageSize);
}
