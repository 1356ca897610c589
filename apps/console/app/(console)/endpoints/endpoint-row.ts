import { endpointTarget } from './endpoint-url';
import type { Endpoint } from './endpoint.types';

/** What a list row shows; built on the server so the full URL never reaches the list page. */
export interface EndpointRow extends Pick<
  Endpoint,
  'id' | 'tenantId' | 'name' | 'status' | 'disabledReason' | 'health' | 'events'
> {
  maskedUrl: string;
}

export function toEndpointRow(endpoint: Endpoint): EndpointRow {
  const { id, tenantId, name, status, disabledReason, health, events } = endpoint;
  return { id, tenantId, name, status, disabledReason, health, events, maskedUrl: endpointTarget(endpoint) };
}
