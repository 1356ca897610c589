import { hotStatement, type HotSql } from '@svc/db';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock.js';
import { isSuccess, type AttemptResult, type EndpointHealthState } from '../deliveries/delivery-policy.js';
import type { DispatchOwnershipService } from '../engine/dispatch-ownership.service.js';
import type { AttemptOutcome, SettlementService } from '../engine/settlement.service.js';
import { isRetryableConflict } from '../common/transaction.js';
import type { EngineEventSink } from '../deliveries/delivery-records.js';
import type { EndpointCredentialsService } from '../endpoints/endpoint-credentials.service.js';
import type { SettledRow, SettleRunner } from '../engine/settlement.service.js';
import { streamAttempt, type StreamLeaseFields } from './stream-attempt.js';
import { settleAndClaimForStream, type StreamClaim, type StreamWakeAlong } from './stream-claim.js';
import { forgetLease, knownLease, type KnownLease } from './stream-leases.js';
import { STREAM_WAKE_CHANNEL, STREAM_WAKE_SENDER } from './stream-signals.js';
import { streamTokenLookup, streamTokenTouch } from './stream-token-sql.js';
import { LAST_USED_RESOLUTION_MS, streamTokenDigest } from './stream-tokens.service.js';

/** What a receiver answered for one attempt: an HTTP status, or `error` when its handler failed without one. */
export interface StreamAck {
  deliveryId: string;
  attempt: number;
  status: number | 'error';
}

/**
 * `settled`: the ack settled the attempt; `stale`: that attempt is no longer leased (timed out, settled by an earlier
 * ack, its connection gone); `unknown`: not a delivery of this endpoint.
 */
export type StreamAckResult = 'settled' | 'stale' | 'unknown';

export interface StreamSettleDeps {
  db: DataSource;
  /** Plan-cached statements: acknowledgements are a stream's hot path. */
  hot: HotSql;
  clock: Clock;
  settlement: SettlementService;
  ownership: DispatchOwnershipService;
}

/** A stream lease as settlement needs it: the delivery, its lease and its endpoint's circuit. */
interface LeaseRow extends StreamLeaseFields {
  delivery_id: string;
  ack_attempt: number;
  lease_owner: string | null;
  attempt: number | null;
  due_at: Date | null;
  circuit: 'closed' | 'half_open' | 'open' | null;
  consecutive_failures: number | null;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  next_probe_at: Date | null;
  probe_wait_seconds: number | null;
  health_version: string | null;
}

/** The deliveries named (with the attempt each answers), their queue rows and their endpoint's circuit. */
const LEASES_SELECT = `
SELECT x.delivery_id, x.ack_attempt, d.id, q.lease_owner, q.attempt, q.due_at, d.team_id, d.tenant_id, d.endpoint_id,
       d.message_id, d.event_type, d.attempt_count, d.next_trigger, d.expires_at, d.sequence, d.content_type,
       e.timeout_seconds, e.url_revision, e.retry_delays_seconds, h.circuit, h.consecutive_failures,
       h.last_success_at, h.last_failure_at, h.next_probe_at, h.probe_wait_seconds, h.version AS health_version
  FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS x(delivery_id, ack_attempt, ord)
  LEFT JOIN deliveries d ON d.id = x.delivery_id AND ($3::text IS NULL OR d.endpoint_id = $3)
  LEFT JOIN delivery_queue q ON q.delivery_id = d.id
  LEFT JOIN endpoints e ON e.id = d.endpoint_id
  LEFT JOIN endpoint_health h ON h.endpoint_id = d.endpoint_id`;

const LEASES_SQL = hotStatement('stream_leases_v1', `${LEASES_SELECT}\n ORDER BY x.ord`);

/**
 * The leases an acknowledgement names, read only when its stream token ($4, its SHA-256) is one of the endpoint's
 * ($3) and not revoked, in the same statement (no rows: 401): the token's check costs no round trip of its own and
 * sees a revocation committed before it, in any process. Marks the token used, as its authentication does.
 */
const ACK_LEASES_SQL = hotStatement(
  'stream_ack_leases_v1',
  `WITH caller AS (${streamTokenLookup({ tokenSha256: '$4', endpointId: '$3' })}),
   used AS (${streamTokenTouch({ now: '$5', resolutionSeconds: '$6' })})
${LEASES_SELECT}
  JOIN caller ON true
 ORDER BY x.ord`,
);

/**
 * Every stream lease's owner starts with wdc_ (the engine's orphan release leaves them to the stream sweep): a
 * connection's ID, or a timeout sweep's wdc_sweep_ lease while it settles.
 */
export const SWEEP_PREFIX = 'wdc_sweep_';
/** How long a timeout sweep holds what it took; past this a sweep that died is released (releaseDead). */
const SWEEP_LEASE_MS = 60_000;
const isConnectionLease = (owner: string | null): owner is string =>
  owner !== null && owner.startsWith('wdc_') && !owner.startsWith(SWEEP_PREFIX);

/** What acknowledging needs besides settlement: the claim made in the same transaction. */
export interface StreamAckDeps extends StreamSettleDeps {
  credentials: EndpointCredentialsService;
  events: EngineEventSink;
}

export interface AcknowledgeOptions {
  /** The request's stream token: checked in the statement that reads the leases (answer null: 401). */
  token: string;
  /**
   * A stream of this process to claim for in the settlement's own transaction and round trip (its `want`), so the
   * room the acknowledgements free is filled at once; that transaction also wakes the endpoint's other streams.
   */
  claimFor?: ClaimAlong;
}

/** A stream of this process to claim for with a settlement; `local`: every stream of the endpoint it holds. */
export interface ClaimAlong {
  connectionId: string;
  want: number;
  local: readonly string[];
}

/** The wake-up of the endpoint's streams in other processes (their own sender's mark: ignored here). */
const wakeAlong = (endpointId: string, local: readonly string[]): StreamWakeAlong => ({
  channel: STREAM_WAKE_CHANNEL,
  payload: `${STREAM_WAKE_SENDER}:${endpointId}`,
  local,
});

export interface Acknowledged {
  results: StreamAckResult[];
  /** The claim made with the settlement (options.claimFor), or null: none was made (the caller claims as usual). */
  claim: StreamClaim | null;
}

/**
 * Acknowledgements of one endpoint's deliveries: each one that answers the attempt its row is leased for (to any
 * connection of the endpoint, before the lease ends) is settled through SettlementService exactly as a push attempt
 * with that answer would be (attempt row, analytics facts, charges, events, circuit, retries, 410); the others are
 * `stale` or `unknown` and change nothing. Null: the token is not a valid one of this endpoint (nothing is read).
 */
export async function acknowledge(
  deps: StreamAckDeps,
  endpointId: string,
  acks: readonly StreamAck[],
  options: AcknowledgeOptions,
): Promise<Acknowledged | null> {
  const known = options.claimFor && (await acknowledgeKnown(deps, endpointId, acks, options.token, options.claimFor));
  if (known) return known;
  const now = deps.clock.now();
  // A read while a settlement of the endpoint runs may miss its write: then the turn reads the circuit again.
  const readAt = settling.has(endpointId) ? null : generationOf(endpointId);
  const rows = (await deps.hot.query<LeaseRow>(ACK_LEASES_SQL, [
    acks.map((a) => a.deliveryId),
    acks.map((a) => a.attempt),
    endpointId,
    streamTokenDigest(options.token),
    now,
    LAST_USED_RESOLUTION_MS / 1000,
  ])) as LeaseRow[];
  if (rows.length === 0) return null;
  const results: StreamAckResult[] = [];
  const outcomes: { owner: string; outcome: AttemptOutcome; index: number }[] = [];
  const seen = new Set<string>();
  rows.forEach((row, i) => {
    const ack = acks[i]!;
    if (row.id === null) return void results.push('unknown');
    const live =
      isConnectionLease(row.lease_owner) && row.attempt === ack.attempt && row.due_at !== null && row.due_at > now;
    // The same attempt twice in one batch: the first answer counts.
    if (!live || seen.has(row.delivery_id)) return void results.push('stale');
    seen.add(row.delivery_id);
    results.push('settled');
    outcomes.push({
      owner: row.lease_owner!,
      outcome: outcomeOf(deps.clock, row, resultOf(ack.status), now),
      index: i,
    });
  });
  const along = options.claimFor && { ...options.claimFor, endpointId };
  const { applied, claim } = await settleByOwner(deps, outcomes, rows, readAt, along);
  for (const { index, outcome } of outcomes) if (!applied.has(outcome.attempt.deliveryId)) results[index] = 'stale';
  for (const ack of acks) forgetLease(ack.deliveryId);
  return { results, claim };
}

/** A transaction that found what its settlement was decided on changed (stream-settle's check): settle again. */
class KnownLeasesMoved extends Error {}

/**
 * Acknowledgements of leases this process handed out (stream-leases.ts) and whose endpoint it settled last (its
 * circuit as that settlement left it): settled without reading the leases first. The settlement is the same
 * statement, decided by the same rules on the same facts; its transaction first checks, under the endpoint's claim
 * lock, that those facts hold (the token is valid, the endpoint and its circuit are at the versions read) and runs
 * the claim for `claimFor`. Undefined when the batch does not qualify or the check failed (nothing was written):
 * the caller reads the leases and settles as usual.
 */
async function acknowledgeKnown(
  deps: StreamAckDeps,
  endpointId: string,
  acks: readonly StreamAck[],
  token: string,
  claimFor: ClaimAlong,
): Promise<Acknowledged | undefined> {
  const now = deps.clock.now();
  // Successes on a closed circuit only: their settlement is always the one statement (no events, no disable), the
  // one the check runs before. Any other answer may need SettlementService's own transaction: read as usual.
  if (!acks.every((ack) => isSuccess(resultOf(ack.status)))) return undefined;
  const leases: KnownLease[] = [];
  for (const ack of acks) {
    const lease = knownLease(ack.deliveryId);
    if (!lease || lease.fields.endpoint_id !== endpointId || lease.attempt !== ack.attempt || lease.dueAt <= now)
      return undefined;
    if (leases.includes(lease) || (leases[0] && leases[0].connectionId !== lease.connectionId)) return undefined;
    leases.push(lease);
  }
  const endpointVersion = leases[0]!.endpointVersion;
  if (leases.some((lease) => lease.endpointVersion !== endpointVersion)) return undefined;
  const owner = leases[0]!.connectionId;
  try {
    return await inTurn(endpointId, async () => {
      const health = lastHealth.get(endpointId);
      if (health?.circuit !== 'closed') return undefined;
      const outcomes = leases.map((lease, i) =>
        outcomeOf(deps.clock, knownRow(lease, owner, health), resultOf(acks[i]!.status), now),
      );
      const check = (literal: (value: unknown) => string) => `
        WITH caller AS (${streamTokenLookup({ tokenSha256: literal(streamTokenDigest(token)), endpointId: literal(endpointId) })}),
        used AS (${streamTokenTouch({ now: literal(now), resolutionSeconds: literal(LAST_USED_RESOLUTION_MS / 1000) })})
        SELECT 1 / (CASE WHEN EXISTS (SELECT 1 FROM caller)
          AND (SELECT h.version FROM endpoint_health h WHERE h.endpoint_id = ${literal(endpointId)})
              IS NOT DISTINCT FROM ${literal(health.version)}::bigint
          AND (SELECT e.version FROM endpoints e WHERE e.id = ${literal(endpointId)}) = ${literal(endpointVersion)}::bigint
          THEN 1 ELSE 0 END) AS facts_hold`;
      let claimed: (() => Promise<StreamClaim>) | null = null;
      const result = await deps.settlement.settle(
        owner,
        outcomes,
        () => health,
        async (statement, params) => {
          try {
            const both = await settleAndClaimForStream(
              deps,
              { ...claimFor, endpointId },
              { statement, params, check },
              wakeAlong(endpointId, claimFor.local),
            );
            claimed = both.claim;
            return both.settleRows as SettledRow[];
          } catch (error) {
            if (isRetryableConflict(error)) throw error;
            // division_by_zero: the check found the facts changed; anything else: settle the usual way too.
            throw new KnownLeasesMoved((error as Error).message);
          }
        },
      );
      // Unreachable (successes on a closed circuit settle in the one statement), kept as the guard it would need.
      if (!claimed) throw new Error('a known acknowledgement settled outside its checked transaction');
      const after = result.health.get(endpointId);
      if (after) lastHealth.set(endpointId, after);
      else lastHealth.delete(endpointId);
      if (result.disabled.length > 0) await deps.ownership.cancelDisabledBacklogs(result.disabled);
      for (const ack of acks) forgetLease(ack.deliveryId);
      const results = result.outcomes.map((o): StreamAckResult => (o.applied ? 'settled' : 'stale'));
      return { results, claim: await (claimed as () => Promise<StreamClaim>)() };
    });
  } catch (error) {
    if (error instanceof KnownLeasesMoved) {
      lastHealth.delete(endpointId);
      return undefined;
    }
    throw error;
  }
}

/** A known lease as the row its acknowledgement would have read, with the circuit as last settled here. */
function knownRow(lease: KnownLease, owner: string, health: EndpointHealthState): LeaseRow {
  return {
    ...lease.fields,
    delivery_id: lease.fields.id!,
    ack_attempt: lease.attempt,
    lease_owner: owner,
    attempt: lease.attempt,
    due_at: lease.dueAt,
    circuit: health.version === null && health.circuit === 'closed' ? null : health.circuit,
    consecutive_failures: health.consecutiveFailures,
    last_success_at: health.lastSuccessAt,
    last_failure_at: health.lastFailureAt,
    next_probe_at: health.nextProbeAt,
    probe_wait_seconds: health.probeWaitSeconds,
    health_version: health.version ?? null,
  };
}

/**
 * Each stream endpoint's circuit as this process's last settlement of acknowledgements left it, with its row's
 * version (null: no row): what acknowledgeKnown decides on, checked against the row in its transaction.
 */
const lastHealth = new Map<string, EndpointHealthState>();

/**
 * Stream leases that ended without an acknowledgement become failed `timeout` attempts, retried on the endpoint's
 * delays like any other failure (of one endpoint, or of every endpoint for the maintenance sweep). Each row is first
 * moved to a lease of this sweep, so two sweeps (or a sweep and a late ack) never settle one attempt twice; a sweep
 * that dies half-way leaves rows the engine's orphan release frees. Returns how many it settled.
 */
export async function settleTimedOut(deps: StreamSettleDeps, endpointId: string | null, limit = 500): Promise<number> {
  const now = deps.clock.now();
  const sweeper = SWEEP_PREFIX + randomBytes(8).toString('hex');
  const taken = (await deps.db.query(
    // A SELECT around the UPDATE: TypeORM answers a bare UPDATE ... RETURNING with [rows, count].
    `WITH taken AS (
       UPDATE delivery_queue q SET lease_owner = $1, due_at = $5
        WHERE q.delivery_id IN (
          SELECT delivery_id FROM delivery_queue
           WHERE lease_owner IS NOT NULL AND lease_owner LIKE 'wdc\\_%' AND lease_owner NOT LIKE 'wdc\\_sweep\\_%'
             AND due_at <= $2 AND ($3::text IS NULL OR endpoint_id = $3)
           ORDER BY due_at LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING q.delivery_id, q.attempt)
     SELECT delivery_id, attempt FROM taken`,
    [sweeper, now, endpointId, limit, new Date(now.getTime() + SWEEP_LEASE_MS)],
  )) as { delivery_id: string; attempt: number }[];
  if (taken.length === 0) return 0;
  const rows = (await deps.hot.query<LeaseRow>(LEASES_SQL, [
    taken.map((t) => t.delivery_id),
    taken.map((t) => t.attempt),
    null,
  ])) as LeaseRow[];
  const outcomes = rows
    .filter((row) => row.id !== null && row.lease_owner === sweeper)
    .map((row, index) => ({
      owner: sweeper,
      outcome: outcomeOf(deps.clock, row, { kind: 'timeout', reason: 'no_acknowledgement' }, now),
      index,
    }));
  await settleByOwner(deps, outcomes, rows, null);
  return outcomes.length;
}

/**
 * One settlement at a time per endpoint in this process. The circuit is fenced by its row's version, so two
 * settlements of one endpoint that read the same version would drop the second's failures (docs/delivery.md,
 * "Circuits are fenced"); the push engine has one owner per endpoint, streams have acknowledgements arriving
 * concurrently, so they take turns here. (Acknowledgements of one endpoint through two server processes at the same
 * moment can still lose a count: the safe side, the circuit opens a little later.)
 */
const settling = new Map<string, Promise<unknown>>();

/**
 * Settlements of each endpoint this process has begun (kept, a number per endpoint that had one): a read of the
 * circuit made before the last one began is stale.
 */
const generations = new Map<string, number>();
const generationOf = (endpointId: string) => generations.get(endpointId) ?? 0;

function inTurn<T>(endpointId: string, work: () => Promise<T>): Promise<T> {
  const before = settling.get(endpointId);
  const run = () => {
    generations.set(endpointId, generationOf(endpointId) + 1);
    return work();
  };
  const mine = (before ?? Promise.resolve()).then(run, run);
  const tail = mine.catch(() => undefined);
  settling.set(endpointId, tail);
  void tail.then(() => {
    if (settling.get(endpointId) === tail) settling.delete(endpointId);
  });
  return mine;
}

/**
 * Settles each owner's outcomes under its own lease (the settlement's fence); answers the deliveries applied. With
 * `along`, a batch of that endpoint's one owner that needs no events is settled in the transaction of a claim for
 * `along.connectionId` (stream-claim.ts), whose result comes back too.
 */
async function settleByOwner(
  deps: StreamAckDeps | StreamSettleDeps,
  outcomes: readonly { owner: string; outcome: AttemptOutcome }[],
  rows: readonly LeaseRow[],
  /** generationOf(the endpoint) when `rows` were read (acknowledgements of one endpoint); null: always read again. */
  readAt: number | null,
  along?: ClaimAlong & { endpointId: string },
): Promise<{ applied: Set<string>; claim: StreamClaim | null }> {
  const applied = new Set<string>();
  const byEndpoint = new Map<string, Map<string, AttemptOutcome[]>>();
  for (const { owner, outcome } of outcomes) {
    const owners = byEndpoint.get(outcome.attempt.endpointId) ?? new Map<string, AttemptOutcome[]>();
    byEndpoint.set(outcome.attempt.endpointId, owners);
    owners.set(owner, [...(owners.get(owner) ?? []), outcome]);
  }
  const disabled: string[] = [];
  let claim: StreamClaim | null = null;
  for (const [endpointId, owners] of byEndpoint)
    await inTurn(endpointId, async () => {
      // The circuit as the previous settlement of this endpoint left it: the rows' read when none began since it
      // (the turn's own count is 1 then), else read again.
      const read = rows.find((row) => row.id !== null && row.endpoint_id === endpointId);
      const fresh = read !== undefined && readAt !== null && generationOf(endpointId) === readAt + 1;
      let health = fresh ? healthOf(read) : await readHealth(deps.db, endpointId);
      const combine = along?.endpointId === endpointId && owners.size === 1 && 'credentials' in deps;
      for (const [owner, batch] of owners) {
        let claimed: (() => Promise<StreamClaim>) | null = null;
        const run: SettleRunner | undefined = combine
          ? async (statement, params) => {
              try {
                const both = await settleAndClaimForStream(
                  deps,
                  along,
                  { statement, params },
                  wakeAlong(endpointId, along.local),
                );
                claimed = both.claim;
                return both.settleRows as SettledRow[];
              } catch (error) {
                // A conflict is retried as one; anything else settles the usual way (the stream claims as usual).
                if (isRetryableConflict(error)) throw error;
                claimed = null;
                return deps.hot.query<SettledRow>(statement, params);
              }
            }
          : undefined;
        const result = await deps.settlement.settle(owner, batch, () => health, run);
        health = result.health.get(endpointId) ?? (await readHealth(deps.db, endpointId));
        // Acknowledgements' settlements leave the circuit for the next one's shortcut (acknowledgeKnown).
        if (readAt !== null) lastHealth.set(endpointId, health);
        result.outcomes.forEach((settled, i) => {
          if (settled.applied) applied.add(batch[i]!.attempt.deliveryId);
        });
        disabled.push(...result.disabled);
        if (claimed) claim = await (claimed as () => Promise<StreamClaim>)();
      }
    });
  // A 410 acknowledgement disabled the endpoint, as a push 410 does: its waiting deliveries are canceled.
  if (disabled.length > 0) await deps.ownership.cancelDisabledBacklogs(disabled);
  return { applied, claim };
}

async function readHealth(db: DataSource, endpointId: string): Promise<EndpointHealthState> {
  const [row] = (await db.query(
    `SELECT circuit, consecutive_failures, last_success_at, last_failure_at, next_probe_at, probe_wait_seconds,
            version AS health_version
       FROM endpoint_health WHERE endpoint_id = $1`,
    [endpointId],
  )) as HealthRow[];
  return row ? healthOf(row) : CLOSED;
}

const CLOSED: EndpointHealthState = {
  circuit: 'closed',
  consecutiveFailures: 0,
  lastSuccessAt: null,
  lastFailureAt: null,
  nextProbeAt: null,
  probeWaitSeconds: 60,
  version: null,
};

type HealthRow = Pick<
  LeaseRow,
  | 'circuit'
  | 'consecutive_failures'
  | 'last_success_at'
  | 'last_failure_at'
  | 'next_probe_at'
  | 'probe_wait_seconds'
  | 'health_version'
>;

function healthOf(row: HealthRow): EndpointHealthState {
  if (row.circuit === null) return CLOSED;
  return {
    circuit: row.circuit,
    consecutiveFailures: row.consecutive_failures ?? 0,
    lastSuccessAt: row.last_success_at,
    lastFailureAt: row.last_failure_at,
    nextProbeAt: row.next_probe_at,
    probeWaitSeconds: row.probe_wait_seconds ?? 60,
    version: row.health_version === null ? null : String(row.health_version),
  };
}

function resultOf(status: number | 'error'): AttemptResult {
  return status === 'error'
    ? { kind: 'network_error', reason: 'receiver_handler_error' }
    : { kind: 'response', status, retryAfterSeconds: null };
}

/**
 * The attempt as the push engine would have settled it. The lease began a visibility timeout before it ends; the
 * trigger is the claim's: a probe while the circuit is not closed, a retry after a lease that never settled.
 */
function outcomeOf(clock: Clock, row: LeaseRow, result: AttemptResult, now: Date): AttemptOutcome {
  const startedAt = new Date(Math.min(now.getTime(), row.due_at!.getTime() - row.timeout_seconds * 1000));
  const probing = row.circuit !== null && row.circuit !== 'closed';
  const attempt = streamAttempt(
    clock,
    row,
    { attemptNumber: row.attempt!, probing, startedAt },
    { body: Buffer.alloc(0), headers: {}, signingSecrets: [], dueSince: startedAt, traceparent: null },
  );
  return {
    attempt,
    result,
    durationMs: Math.max(0, now.getTime() - startedAt.getTime()),
    responseBody: null,
    jitter: Math.random(),
    failureDetail: null,
  };
}
