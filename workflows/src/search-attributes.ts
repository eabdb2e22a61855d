import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';

/** Registered on the namespace by the platform (see packages/platform ensureNamespace). */
export const ORGANIZATION_ID = defineSearchAttributeKey('OrganizationId', SearchAttributeType.KEYWORD);
export const ENTITY_ID = defineSearchAttributeKey('EntityId', SearchAttributeType.KEYWORD);

export function businessSearchAttributes(organizationId: string, entityId: string): TypedSearchAttributes {
  return new TypedSearchAttributes([
    { key: ORGANIZATION_ID, value: organizationId },
    { key: ENTITY_ID, value: entityId },
  ]);
}
