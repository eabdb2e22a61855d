/** The caller-ID name registration's lifecycle states and client-written fields, shared by its routes, domain and store. */
export const CNAM_STATUSES = ['draft', 'submitted', 'in_review', 'approved', 'rejected'] as const;
export type CnamStatus = (typeof CNAM_STATUSES)[number];

/** The fields a client writes (PUT body), in the order they are answered. */
export const CNAM_FIELDS = [
  'display_name',
  'legal_business_name',
  'street_address',
  'city',
  'state',
  'postal_code',
  'country',
  'business_type',
  'business_industry',
  'registration_id_type',
  'registration_number',
  'regions_of_operation',
  'website',
  'contact_first_name',
  'contact_last_name',
  'contact_email',
  'contact_phone',
  'contact_title',
  'phone_number',
] as const;
export type CnamField = (typeof CNAM_FIELDS)[number];
export type CnamFields = { [K in CnamField]: K extends 'regions_of_operation' ? string[] : string | null };
