/** The dead letters search's values as the URL holds them. */
export interface DeadLetterSearch {
  status: 'failed' | 'expired';
  tenant: string;
  endpoint: string;
  eventType: string;
  createdAfter: string;
  createdBefore: string;
  /** An ordered endpoint's sequence number, as typed (the API wants the endpoint beside it). */
  sequence: string;
  /** 'show' lists dead letters a later replay repaired too; by default ('') they are hidden. */
  repaired: '' | 'show';
}

/** The API fields the dead letters filter by, so their refusals show at the filters. */
export const DEAD_LETTER_FILTER_FIELDS = [
  'status',
  'tenant_id',
  'endpoint_id',
  'event_type',
  'created_after',
  'created_before',
  'sequence',
] as const;
