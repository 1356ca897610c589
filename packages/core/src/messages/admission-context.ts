import type { EntityManager } from 'typeorm';
import { hotStatement } from '@svc/db';
import { queryPrepared } from '../common/transaction.js';
import type { CandidateEndpoint } from './matching.js';

/** At most this many messages of one team are being stored at once (the spec's 4). */
export const ADMISSION_SLOTS = 4;
/** Past this many tenants in memory, the cache starts over. */
const TENANT_CACHE_ENTRIES = 10_000;

/** What the opening statement needs to know of one request. */
export interface ContextRequest {
  teamId: string;
  tenantId: string;
  eventType: string;
  idempotencyKey: string | null;
  payerKeyId: string;
  /** endpoint_ids of the request (or the endpoint under test), null for every endpoint of the tenant. */
  requestedEndpointIds: readonly string[] | null;
}

/** A request's Idempotency-Key: whether this transaction holds it, and the live record of the key, if any. */
export interface KeyState {
  locked: boolean;
  fingerprint: string | null;
  key_id: string | null;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  /** Base64. */
  response_body: string | null;
}

export interface TeamState {
  /** The admission slots this transaction holds for the team's requests (one per request that will run). */
  slots: number[];
  /** Queue counters, read under the team's queue lock. */
  pending: number;
  contentBytes: number;
  retentionDays: number | null;
}

export interface PayerState {
  card: boolean;
  limit: bigint | null;
  /** Month-to-date spend of the batch's billing month, read under the team's queue lock. */
  spent: bigint;
  /** The month was closed (another process's clock is past its end). */
  closed: boolean;
}

export interface TenantState {
  /** null: not a tenant of the team. */
  status: string | null;
  /** Not deleted, in ID order. */
  endpoints: CandidateEndpoint[];
}

/** Everything a batch decides on, read in one round trip. */
export interface AdmissionContext {
  /** Per request, in order. */
  keys: KeyState[];
  teams: Map<string, TeamState>;
  /** By team and tenant (`tenantKey`). */
  tenants: Map<string, TenantState>;
  /** Whether an event type of the catalog is archived (absent: not in the catalog), by team and name. */
  eventTypes: Map<string, boolean>;
  payers: Map<string, PayerState>;
  /** Requested endpoints that are deleted or of another tenant of the team (matching names them in its refusal). */
  foreignEndpoints: Map<string, CandidateEndpoint>;
  /**
   * Teams whose queue lock another transaction held (a read that did not wait): their requests were left out, with
   * no key lock and no slot taken, and are admitted in a transaction that waits for the lock.
   */
  busy: ReadonlySet<string>;
}

/**
 * How the opening statement takes the teams' queue locks: waiting for each, or without waiting, leaving out the
 * teams whose lock is held elsewhere (`AdmissionContext.busy`).
 */
export type QueueLocks = 'wait' | 'skip_busy';

interface CachedEndpoints {
  version: string;
  endpoints: CandidateEndpoint[];
}

export const tenantKey = (teamId: string, tenantId: string): string => `${teamId}\u0000${tenantId}`;
export const eventTypeKey = (teamId: string, name: string): string => `${teamId}\u0000${name}`;

interface ContextRow {
  requests: KeyState[];
  teams: { team_id: string; slots: number[]; pending: number; content_bytes: number }[];
  payers: { key_id: string; spent: string; closed: boolean }[];
  tenants: {
    team_id: string;
    tenant_id: string;
    status: string | null;
    version: string;
    endpoints: CandidateEndpoint[] | null;
  }[];
  event_types: { team_id: string; name: string; archived: boolean | null }[];
  settings: { team_id: string; retention_days: number }[];
  payer_config: { key_id: string; limit: string | null; card: boolean }[];
  requested: CandidateEndpoint[];
  busy: string[];
}

const ENDPOINT_JSON = `json_build_object(
  'id', e.id, 'tenant_id', e.tenant_id, 'status', e.status, 'deleted', e.deleted_at IS NOT NULL, 'events', e.events,
  'filter', e.filter, 'transform', e.transform, 'rules_version', e.version)`;

/**
 * The opening statement of an admission batch (docs/admission.md, "Batches"): the locks, the keys' records, the slots
 * and counters (admission_begin_v2), and beside them the tenants, event types, retention settings, payers and the
 * endpoints the batch needs. A fixed hot statement, so the production processes plan it on every connection at start
 * (warmPool).
 */
const CONTEXT_SQL = hotStatement(
  'admission_context_v1',
  `SELECT b.requests, b.teams, b.payers, b.busy,
              (SELECT coalesce(json_agg(json_build_object(
                        'team_id', x.team_id, 'tenant_id', x.tenant_id, 'status', t.status,
                        'version', coalesce(v.version, 0)::text,
                        'endpoints', CASE WHEN t.id IS NULL OR coalesce(v.version, 0) = x.cached THEN NULL ELSE (
                          SELECT coalesce(json_agg(${ENDPOINT_JSON} ORDER BY e.id), '[]'::json)
                            FROM endpoints e
                           WHERE e.tenant_id = x.tenant_id AND e.team_id = x.team_id AND e.deleted_at IS NULL) END)),
                        '[]'::json)
                 FROM unnest($7::text[], $8::text[], $9::bigint[]) AS x(team_id, tenant_id, cached)
                 LEFT JOIN tenants t ON t.id = x.tenant_id AND t.team_id = x.team_id
                 LEFT JOIN tenant_endpoint_versions v ON v.tenant_id = x.tenant_id) AS tenants,
              (SELECT coalesce(json_agg(json_build_object('team_id', x.team_id, 'name', x.name, 'archived', et.archived)),
                               '[]'::json)
                 FROM unnest($10::text[], $11::text[]) AS x(team_id, name)
                 LEFT JOIN event_types et ON et.team_id = x.team_id AND et.name = x.name) AS event_types,
              (SELECT coalesce(json_agg(json_build_object('team_id', s.team_id,
                                                          'retention_days', s.payload_retention_days)), '[]'::json)
                 FROM team_settings s WHERE s.team_id = ANY($12::text[])) AS settings,
              (SELECT coalesce(json_agg(json_build_object('key_id', k.id, 'limit', k.spending_limit_micros::text,
                                                          'card', t.has_payment_card)), '[]'::json)
                 FROM api_keys k JOIN teams t ON t.id = k.team_id WHERE k.id = ANY($5::text[])) AS payer_config,
              (SELECT coalesce(json_agg(${ENDPOINT_JSON}), '[]'::json)
                 FROM unnest($13::text[], $14::text[], $15::text[]) AS r(team_id, tenant_id, id)
                 JOIN endpoints e ON e.id = r.id AND e.team_id = r.team_id
                WHERE e.tenant_id <> r.tenant_id OR e.deleted_at IS NOT NULL) AS requested
         FROM admission_begin_v2($1::text[], $2::text[], $3::timestamptz, $4::int, $5::text[], $6::date, $16::boolean)
              AS b`,
);

/**
 * The opening statement of an admission batch, one round trip whatever the batch's size: `admission_begin_v2`
 * (prisma-free-schema/0016_admission_batches.sql, 0035_admission_busy_teams.sql) takes the requests' idempotency keys, the teams' queue locks and
 * the admission slots and reads the keys' records, queue counters and spend under them; beside it, the tenants,
 * event types, retention settings, payers and requested endpoints. A tenant's endpoints come back only when its
 * configuration version moved since this process cached them, so an unchanged tenant costs one index lookup and
 * no rule is parsed or compiled again.
 */
export class AdmissionContextReader {
  private readonly tenantEndpoints = new Map<string, CachedEndpoints>();

  async read(
    tx: EntityManager,
    requests: readonly ContextRequest[],
    now: Date,
    month: string,
    locks: QueueLocks,
  ): Promise<AdmissionContext> {
    const teams = [...new Set(requests.map((r) => r.teamId))];
    const payers = [...new Set(requests.map((r) => r.payerKeyId))];
    const tenantPairs = distinctPairs(requests.map((r) => [r.teamId, r.tenantId]));
    const eventTypePairs = distinctPairs(requests.map((r) => [r.teamId, r.eventType]));
    // The cached endpoints the statement is told about: a concurrent read may replace or drop the cache entries,
    // these stay what the versions sent refer to.
    if (this.tenantEndpoints.size >= TENANT_CACHE_ENTRIES) this.tenantEndpoints.clear();
    const known = new Map(
      tenantPairs.flatMap(([team, tenant]) => {
        const cached = this.tenantEndpoints.get(tenantKey(team, tenant));
        return cached ? [[tenantKey(team, tenant), cached] as const] : [];
      }),
    );
    const requested = requests.flatMap((r) =>
      (r.requestedEndpointIds ?? []).map((id) => ({ teamId: r.teamId, tenantId: r.tenantId, id })),
    );
    const rows = await queryPrepared<ContextRow>(tx, CONTEXT_SQL, [
      requests.map((r) => r.teamId),
      requests.map((r) => r.idempotencyKey),
      now,
      ADMISSION_SLOTS,
      payers,
      month,
      tenantPairs.map(([team]) => team),
      tenantPairs.map(([, tenant]) => tenant),
      tenantPairs.map(([team, tenant]) => known.get(tenantKey(team, tenant))?.version ?? '-1'),
      eventTypePairs.map(([team]) => team),
      eventTypePairs.map(([, name]) => name),
      teams,
      requested.map((r) => r.teamId),
      requested.map((r) => r.tenantId),
      requested.map((r) => r.id),
      locks === 'wait',
    ]);
    return this.assemble(rows[0]!, known);
  }

  private assemble(row: ContextRow, known: ReadonlyMap<string, CachedEndpoints>): AdmissionContext {
    const retention = new Map(row.settings.map((s) => [s.team_id, s.retention_days]));
    const spend = new Map(row.payers.map((p) => [p.key_id, p]));
    const tenants = new Map<string, TenantState>();
    for (const t of row.tenants) {
      const key = tenantKey(t.team_id, t.tenant_id);
      tenants.set(key, { status: t.status, endpoints: t.status === null ? [] : this.endpointsOf(key, t, known) });
    }
    return {
      keys: row.requests,
      teams: new Map(
        row.teams.map((t) => [
          t.team_id,
          {
            slots: [...t.slots],
            pending: Number(t.pending),
            contentBytes: Number(t.content_bytes),
            retentionDays: retention.get(t.team_id) ?? null,
          },
        ]),
      ),
      tenants,
      eventTypes: new Map(
        row.event_types.filter((e) => e.archived !== null).map((e) => [eventTypeKey(e.team_id, e.name), e.archived!]),
      ),
      payers: new Map(
        row.payer_config.map((p) => [
          p.key_id,
          {
            card: p.card,
            limit: p.limit === null ? null : BigInt(p.limit),
            spent: BigInt(spend.get(p.key_id)?.spent ?? '0'),
            closed: spend.get(p.key_id)?.closed ?? false,
          },
        ]),
      ),
      foreignEndpoints: new Map(row.requested.map((e) => [e.id, e])),
      busy: new Set(row.busy),
    };
  }

  /** The tenant's endpoints: as read now (and cached with their version), or the cached ones when it did not move. */
  private endpointsOf(
    key: string,
    t: ContextRow['tenants'][number],
    known: ReadonlyMap<string, CachedEndpoints>,
  ): CandidateEndpoint[] {
    if (t.endpoints !== null) {
      this.tenantEndpoints.set(key, { version: t.version, endpoints: t.endpoints });
      return t.endpoints;
    }
    const cached = known.get(key);
    // The statement leaves them out only when the version it was given is current.
    if (!cached || cached.version !== t.version)
      throw new Error(`admission: no endpoints for tenant version ${t.version}`);
    return cached.endpoints;
  }
}

function distinctPairs(pairs: [string, string][]): [string, string][] {
  const seen = new Map<string, [string, string]>();
  for (const pair of pairs) seen.set(`${pair[0]}\u0000${pair[1]}`, pair);
  return [...seen.values()];
}
