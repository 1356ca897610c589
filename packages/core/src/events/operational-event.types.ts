import { randomUUID } from 'node:crypto';
/** Extension types (docs/events.md, docs/portal.md): what a portal session did, with the session's ID. */
export const PORTAL_EVENT_TYPES = [
  'webhooks.portal.session.opened',
  'webhooks.portal.endpoint.created',
  'webhooks.portal.endpoint.updated',
  'webhooks.portal.endpoint.deleted',
  'webhooks.portal.endpoint.resumed',
  'webhooks.portal.endpoint.secret_rotated',
  'webhooks.portal.endpoint.secret_revealed',
  'webhooks.portal.endpoint.tested',
  'webhooks.portal.delivery.retried',
  'webhooks.portal.delivery.replayed',
] as const;

export type PortalEventType = (typeof PORTAL_EVENT_TYPES)[number];

/**
 * The operational event types (spec "Operational events"), the exact data each carries and what bursts of it fold
 * by. docs/events.md is the reader's copy of this table; keep them together.
 */
export const OPERATIONAL_EVENT_TYPES = [
  'webhooks.delivery.failed',
  'webhooks.delivery.expired',
  'webhooks.endpoint.disabled',
  'webhooks.endpoint.recovered',
  'webhooks.endpoint.failing',
  'webhooks.endpoint.held',
  'webhooks.source.rejected',
  'webhooks.replay.completed',
  'webhooks.replay.failed',
  'webhooks.budget.blocked',
  'webhooks.worker.sealing_key_mismatch',
  ...PORTAL_EVENT_TYPES,
] as const;

export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];

export type EventDataValue = string | number | boolean | null;

export interface NewOperationalEvent {
  type: OperationalEventType;
  teamId: string;
  tenantId: string;
  resourceId: string;
  /** The resource's version when the event happened; omitted for resources without versions (stored as "0"). */
  resourceVersion?: string;
  data: Record<string, EventDataValue>;
}

type ValueKind = 'id' | 'count' | 'status_code' | 'reason' | 'time' | 'link';

interface EventRule {
  /** The data fields, exactly (no more, no fewer). */
  data: Readonly<Record<string, ValueKind>>;
  /** The data field that holds resource_id. */
  resource: string;
  /**
   * The data field bursts fold by: occurrences with the same value (and team and type) coalesce. null: never folds
   * (each portal action is its own event, so an operator sees every change a customer made).
   */
  coalesceBy: string | readonly string[] | null;
}

const DELIVERY_OUTCOME: EventRule = {
  data: {
    delivery_id: 'id',
    message_id: 'id',
    endpoint_id: 'id',
    attempts: 'count',
    last_status_code: 'status_code',
    reason: 'reason',
  },
  resource: 'delivery_id',
  // Each delivery fails or expires once: a burst is many deliveries of one endpoint.
  coalesceBy: 'endpoint_id',
};

const PORTAL_ENDPOINT_ACTION: EventRule = {
  data: { session_id: 'id', endpoint_id: 'id' },
  resource: 'endpoint_id',
  coalesceBy: null,
};

export const EVENT_RULES: Readonly<Record<OperationalEventType, EventRule>> = {
  'webhooks.delivery.failed': DELIVERY_OUTCOME,
  'webhooks.delivery.expired': DELIVERY_OUTCOME,
  'webhooks.endpoint.disabled': {
    data: { endpoint_id: 'id', reason: 'reason' },
    resource: 'endpoint_id',
    coalesceBy: 'endpoint_id',
  },
  'webhooks.endpoint.recovered': {
    data: { endpoint_id: 'id', failures_before: 'count', last_error: 'reason', console_url: 'link' },
    resource: 'endpoint_id',
    coalesceBy: 'endpoint_id',
  },
  // An extension type (docs/events.md): the circuit opened.
  'webhooks.endpoint.failing': {
    data: {
      endpoint_id: 'id',
      failures: 'count',
      last_error: 'reason',
      last_status_code: 'status_code',
      next_probe_at: 'time',
      console_url: 'link',
    },
    resource: 'endpoint_id',
    coalesceBy: 'endpoint_id',
  },
  // An extension type (docs/events.md): an ordered endpoint that holds on failure was paused.
  'webhooks.endpoint.held': {
    data: { endpoint_id: 'id', delivery_id: 'id', message_id: 'id', delivery_status: 'reason', reason: 'reason' },
    resource: 'endpoint_id',
    coalesceBy: 'endpoint_id',
  },
  'webhooks.source.rejected': {
    data: { source_id: 'id', reason: 'reason' },
    resource: 'source_id',
    // A burst folds per reason: one event keeps one reason in its data, so a burst of bad signatures with one
    // missing timestamp among them must not report that request as a bad signature.
    coalesceBy: ['source_id', 'reason'],
  },
  'webhooks.replay.completed': {
    data: { replay_id: 'id', deliveries: 'count', succeeded: 'count', failed: 'count' },
    resource: 'replay_id',
    coalesceBy: 'replay_id',
  },
  'webhooks.replay.failed': {
    data: { replay_id: 'id', deliveries: 'count', reason: 'reason' },
    resource: 'replay_id',
    coalesceBy: 'replay_id',
  },
  'webhooks.budget.blocked': {
    data: { source_id: 'id', billing_key_id: 'id', reason: 'reason' },
    resource: 'source_id',
    coalesceBy: 'source_id',
  },
  // An extension type (docs/events.md): a worker could not open an endpoint's secrets (sealed with another key) and
  // handed its deliveries back unsent; they wait for a worker with the right key.
  'webhooks.worker.sealing_key_mismatch': {
    data: { endpoint_id: 'id', worker_id: 'id', deliveries: 'count', sealed_key_id: 'reason', worker_key_id: 'reason' },
    resource: 'endpoint_id',
    coalesceBy: 'endpoint_id',
  },
  'webhooks.portal.session.opened': { data: { session_id: 'id' }, resource: 'session_id', coalesceBy: null },
  'webhooks.portal.endpoint.created': PORTAL_ENDPOINT_ACTION,
  'webhooks.portal.endpoint.updated': {
    data: { session_id: 'id', endpoint_id: 'id', changes: 'reason' },
    resource: 'endpoint_id',
    coalesceBy: null,
  },
  'webhooks.portal.endpoint.deleted': PORTAL_ENDPOINT_ACTION,
  'webhooks.portal.endpoint.resumed': PORTAL_ENDPOINT_ACTION,
  'webhooks.portal.endpoint.secret_rotated': PORTAL_ENDPOINT_ACTION,
  'webhooks.portal.endpoint.secret_revealed': PORTAL_ENDPOINT_ACTION,
  'webhooks.portal.endpoint.tested': {
    data: { session_id: 'id', endpoint_id: 'id', message_id: 'id' },
    resource: 'endpoint_id',
    coalesceBy: null,
  },
  'webhooks.portal.delivery.retried': {
    data: { session_id: 'id', delivery_id: 'id' },
    resource: 'delivery_id',
    coalesceBy: null,
  },
  'webhooks.portal.delivery.replayed': {
    data: { session_id: 'id', delivery_id: 'id', replay_delivery_id: 'id', charged_usd: 'reason' },
    resource: 'delivery_id',
    coalesceBy: null,
  },
};

export function isOperationalEventType(value: unknown): value is OperationalEventType {
  return typeof value === 'string' && (OPERATIONAL_EVENT_TYPES as readonly string[]).includes(value);
}

const ID = /^[a-z]+_[0-9a-z]{1,60}$/;
/** Reasons are short codes or phrases ("gone_410", "receiver answered 410"): no URLs, no line breaks. */
const REASON = /^[\x20-\x7e]{1,200}$/;
const VERSION = /^(0|[1-9][0-9]{0,18})$/;
/** An ISO 8601 UTC timestamp as Date.toISOString writes it. */
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** A console page: http(s), no user information, no query or fragment (nothing a secret could hide in). */
const LINK = /^https?:\/\/[A-Za-z0-9.:[\]-]{1,253}(\/[A-Za-z0-9._~/-]{0,300})?$/;

function checkValue(kind: ValueKind, value: EventDataValue): boolean {
  switch (kind) {
    case 'id':
      return typeof value === 'string' && ID.test(value);
    case 'count':
      return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
    case 'status_code':
      return value === null || (typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 999);
    case 'reason':
      return value === null || (typeof value === 'string' && REASON.test(value) && !value.includes('://'));
    case 'time':
      return typeof value === 'string' && TIME.test(value) && !Number.isNaN(Date.parse(value));
    case 'link':
      return value === null || (typeof value === 'string' && LINK.test(value));
  }
}

/**
 * Refuses an event that does not have exactly its type's data: events hold IDs, reasons, counts and times only,
 * never payloads, URLs or secrets. A refusal is a programming error in the emitter (a plain Error, not an API
 * error), and it rolls back the emitter's transaction.
 */
export function checkNewEvent(event: NewOperationalEvent): void {
  const fail = (why: string): never => {
    throw new Error(`operational event ${String(event.type)} refused: ${why}`);
  };
  if (!isOperationalEventType(event.type)) fail('unknown type');
  const rule = EVENT_RULES[event.type];
  if (!ID.test(event.teamId) || !ID.test(event.tenantId) || !ID.test(event.resourceId))
    fail('teamId, tenantId and resourceId must be IDs');
  if (event.resourceVersion !== undefined && !VERSION.test(event.resourceVersion))
    fail('resourceVersion must be a decimal string');
  if (typeof event.data !== 'object' || event.data === null || Array.isArray(event.data))
    fail('data must be an object');
  const expected = Object.keys(rule.data).sort();
  const actual = Object.keys(event.data).sort();
  if (expected.join(',') !== actual.join(','))
    fail(`data must have exactly ${expected.join(', ')} (got ${actual.join(', ')})`);
  for (const [key, kind] of Object.entries(rule.data)) {
    if (!checkValue(kind, event.data[key] as EventDataValue)) fail(`data.${key} is not a valid ${kind}`);
  }
  if (event.data[rule.resource] !== event.resourceId) fail(`resourceId must equal data.${rule.resource}`);
}

/** The value bursts of this event fold by (see EVENT_RULES). */
export function coalesceKeyOf(event: NewOperationalEvent): string {
  const by = EVENT_RULES[event.type].coalesceBy;
  if (by === null) return `once:${randomUUID()}`;
  return typeof by === 'string' ? String(event.data[by]) : JSON.stringify(by.map((field) => event.data[field]));
}
