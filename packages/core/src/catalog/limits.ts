/** The limits of the spec's table, by the names GET /capabilities returns. */
export interface Limit {
  readonly value: number;
  readonly unit: string;
  /** false where the service does not measure the limit itself. */
  readonly measured: boolean;
}

export const LIMIT_NAMES = [
  'max_body_bytes',
  'max_fanout_endpoints',
  'max_transformed_bytes_per_message',
  'max_attempts',
  'delivery_window_hours',
  'max_schedule_days',
  'max_endpoints_per_tenant',
  'read_requests_per_second',
  'config_writes_per_second',
  'admission_rate',
  'source_requests_per_second',
  'dispatch_rate',
  'max_concurrency',
  'max_endpoint_concurrency',
  'service_concurrency',
  'max_tenants',
  'max_event_types',
  'max_endpoints',
  'max_sources',
  'max_pending_deliveries',
  'max_content_bytes',
  'max_active_replays',
] as const;

export type LimitName = (typeof LIMIT_NAMES)[number];
export type Limits = Record<LimitName, Limit>;

const measured = (value: number, unit: string): Limit => ({ value, unit, measured: true });

export const DEFAULT_LIMITS: Limits = {
  max_body_bytes: measured(1_048_576, 'bytes'),
  max_fanout_endpoints: measured(100, 'endpoints'),
  max_transformed_bytes_per_message: measured(8_388_608, 'bytes'),
  max_attempts: measured(9, 'attempts'),
  delivery_window_hours: measured(72, 'hours'),
  max_schedule_days: measured(7, 'days'),
  max_endpoints_per_tenant: measured(100, 'endpoints'),
  read_requests_per_second: measured(100, 'requests per second'),
  config_writes_per_second: measured(20, 'requests per second'),
  admission_rate: { value: 100, unit: 'messages per second', measured: false },
  source_requests_per_second: measured(50, 'requests per second'),
  dispatch_rate: { value: 1_000, unit: 'attempts per second', measured: false },
  max_concurrency: measured(3, 'requests'),
  max_endpoint_concurrency: measured(3, 'requests'),
  service_concurrency: measured(6, 'requests'),
  max_tenants: measured(10_000, 'tenants'),
  max_event_types: measured(1_000, 'event types'),
  max_endpoints: measured(10_000, 'endpoints'),
  max_sources: measured(1_000, 'sources'),
  max_pending_deliveries: measured(100_000, 'deliveries'),
  max_content_bytes: measured(10_737_418_240, 'bytes'),
  max_active_replays: measured(10, 'jobs'),
};

/** Burst sizes of the token buckets (the spec states twice the rate for reads, writes and admission). */
export const BURSTS = {
  read_requests_per_second: 200,
  config_writes_per_second: 40,
  admission_rate: 200,
  source_requests_per_second: 100,
} as const;

/** Limits with overrides (tests lower quotas to reach them quickly). */
export function limitsWith(overrides: Partial<Record<LimitName, number>> = {}): Limits {
  const limits = { ...DEFAULT_LIMITS };
  for (const [name, value] of Object.entries(overrides) as [LimitName, number][])
    limits[name] = { ...limits[name], value };
  return limits;
}
