/**
 * What each limit is, in words, for the settings page; the API's name stays beside it for whoever reads the API.
 * A name the console does not know yet shows as the API names it.
 */
export const LIMIT_LABELS: Readonly<Record<string, string>> = {
  max_body_bytes: 'Message body size',
  max_fanout_endpoints: 'Endpoints one message goes to',
  max_transformed_bytes_per_message: 'Transformed bodies of one message, together',
  max_attempts: 'Attempts per delivery',
  delivery_window_hours: 'Time a delivery keeps trying',
  max_schedule_days: 'How far ahead a message can be scheduled',
  max_endpoints_per_tenant: 'Endpoints per tenant',
  read_requests_per_second: 'Read requests',
  config_writes_per_second: 'Configuration changes',
  admission_rate: 'Messages accepted',
  source_requests_per_second: 'Requests to each source',
  dispatch_rate: 'Delivery attempts started',
  max_concurrency: 'Requests in flight to one endpoint (default)',
  max_endpoint_concurrency: 'Requests in flight to one endpoint (at most)',
  service_concurrency: 'Requests in flight, all teams together',
  max_tenants: 'Tenants',
  max_event_types: 'Event types',
  max_endpoints: 'Endpoints',
  max_sources: 'Sources',
  max_pending_deliveries: 'Pending deliveries',
  max_content_bytes: 'Stored message content',
  max_active_replays: 'Replays running at once',
};

/**
 * How a limit the API marks `measured: false` is held to, where the docs say: the spec marks these two unmeasured,
 * yet the service enforces both with token buckets (docs/admission.md, docs/delivery.md).
 */
export const UNMEASURED_ENFORCEMENT: Readonly<Record<string, string>> = {
  admission_rate:
    'enforced per team by the admission bucket, bursts up to twice the rate; refusals are 429 rate_limited',
  dispatch_rate: 'enforced by the workers: each of N running workers starts at most the rate / N per second',
};

export function limitLabel(name: string): string {
  return LIMIT_LABELS[name] ?? name;
}
