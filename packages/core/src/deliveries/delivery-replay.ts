import type { EntityManager } from 'typeorm';
import { parseStrict } from '@svc/json';
import { priceMicros, unitsFor, type BillingService } from '../billing/billing.service.js';
import { formatUsd } from '../catalog/catalog.js';
import type { Limits } from '../catalog/limits.js';
import { HOUR, type Clock } from '../common/clock.js';
import type { Actor } from '../common/context.js';
import { notFound, ServiceError } from '../common/errors.js';
import { lockTeamQueue } from '../common/transaction.js';
import { compileRules } from '../endpoints/endpoint-rules.js';
import type { ReplayDeliveryInput } from './delivery.inputs.js';
import { repairedBySql } from './repairs.js';
import { insertGenerations } from './replay-generations.js';

const FINISHED = new Set(['succeeded', 'failed', 'expired', 'canceled']);
/** At most this many deliveries are priced in one quote (a console selection). */
export const MAX_QUOTE_ITEMS = 200;

export interface ReplayQuoteItem {
  delivery_id: string;
  replayable: boolean;
  /** The error a replay would answer (invalid_state, payload_expired, transform_failed, not_found). */
  error_code: string | null;
  reason: string | null;
  delivery_units: number;
  total_usd: string;
  /** A dead letter a later generation already repaired: that generation's ID (replaying it pays again). */
  repaired_by: string | null;
}

export interface ReplayQuote {
  items: ReplayQuoteItem[];
  delivery_units: number;
  total_usd: string;
  /** Items already repaired, and the units and price of the replayable items that are not. */
  repaired_count: number;
  unrepaired_delivery_units: number;
  unrepaired_total_usd: string;
}

interface ReplaySourceRow {
  id: string;
  team_id: string;
  tenant_id: string;
  message_id: string;
  endpoint_id: string;
  event_type: string;
  status: string;
  body: Buffer | null;
  content_type: string;
  redacted_at: Date | null;
  content: Buffer | null;
  retained_until: Date;
  endpoint_status: 'enabled' | 'paused' | 'disabled';
  endpoint_deleted: boolean;
  transform: string | null;
  generation: number;
  pending: string;
  content_bytes: string;
  repaired_by: string | null;
}

/**
 * POST /deliveries/{id}/replay: a succeeded, failed or expired delivery becomes a new delivery generation (new
 * delivery ID, same webhook-id), charged to the caller as a delivery. The body is the frozen bytes the delivery
 * was sent with, or with configuration `current` the endpoint's current transform applied to the original
 * content. 410 payload_expired once the content is redacted or past retention; 409 invalid_state for pending or
 * canceled deliveries and for deleted or disabled endpoints.
 */
export async function replayDelivery(
  tx: EntityManager,
  deps: { clock: Clock; limits: Limits; billing: BillingService },
  actor: Actor,
  id: string,
  input: ReplayDeliveryInput,
  now: Date,
): Promise<string> {
  const { limits } = deps;
  await lockTeamQueue(tx, actor.teamId);
  const source = await lockReplaySource(tx, actor.teamId, id);
  const problem = replayProblem(source, now);
  if (problem) throw problem;

  const body = input.configuration === 'frozen' ? source.body : currentTransform(source);
  const bytes = body?.length ?? source.content!.length;
  if (BigInt(source.pending) + 1n > BigInt(limits.max_pending_deliveries.value))
    throw new ServiceError('queue_full', 'the team has reached its limit of pending deliveries', {
      retryAfter: 5,
    });
  if (BigInt(source.content_bytes) + BigInt(body?.length ?? 0) > BigInt(limits.max_content_bytes.value))
    throw new ServiceError('queue_full', 'the team has reached its limit of stored content', { retryAfter: 5 });

  const units = unitsFor(bytes, 'webhooks.delivery_16k');
  const [deliveryId] = await insertGenerations(
    tx,
    deps,
    [
      {
        replayOf: source.id,
        tenantId: source.tenant_id,
        messageId: source.message_id,
        endpointId: source.endpoint_id,
        eventType: source.event_type,
        generation: source.generation + 1,
        contentType: source.content_type,
        body,
        bodyBytes: bytes,
        units,
      },
    ],
    {
      teamId: actor.teamId,
      payingKeyId: actor.keyId,
      replayId: null,
      windowMs: limits.delivery_window_hours.value * HOUR,
    },
  );
  // Last: the spend row stays locked only from here to the commit.
  await deps.billing.charge(tx, actor, [{ meter: 'webhooks.delivery_16k', units, resourceId: deliveryId! }]);
  return deliveryId!;
}

/**
 * The price of replaying deliveries, before anything is charged (the console shows it before a paid replay):
 * per delivery whether it can be replayed (else the error code it would get), its delivery units and whether a
 * later generation already repaired it (it can still be replayed, and paid for again: the totals without the
 * repaired ones are what replaying only the rest costs); nothing is stored or locked.
 */
export async function quoteDeliveryReplays(
  db: EntityManager,
  teamId: string,
  ids: readonly string[],
  input: ReplayDeliveryInput,
  now: Date,
): Promise<ReplayQuote> {
  const items: ReplayQuoteItem[] = [];
  const wanted = [...new Set(ids)];
  if (wanted.length > MAX_QUOTE_ITEMS)
    throw new ServiceError('invalid_field', `a quote prices at most ${MAX_QUOTE_ITEMS} deliveries`, {
      field: 'delivery_ids',
    });
  const sources = new Map((await readReplaySources(db, teamId, wanted)).map((row) => [row.id, row]));
  for (const id of wanted) {
    const source = sources.get(id);
    if (!source) {
      items.push({
        delivery_id: id,
        replayable: false,
        error_code: 'not_found',
        reason: 'no such delivery',
        delivery_units: 0,
        total_usd: formatUsd(0n),
        repaired_by: null,
      });
      continue;
    }
    let problem = replayProblem(source, now);
    let units = 0;
    if (!problem) {
      try {
        const body = input.configuration === 'frozen' ? source.body : currentTransform(source);
        units = unitsFor(body?.length ?? source.content!.length, 'webhooks.delivery_16k');
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        problem = error;
      }
    }
    items.push({
      delivery_id: id,
      replayable: problem === null,
      error_code: problem?.code ?? null,
      reason: problem?.message ?? null,
      delivery_units: units,
      total_usd: formatUsd(priceMicros([{ meter: 'webhooks.delivery_16k', units, resourceId: id }])),
      repaired_by: source.repaired_by,
    });
  }
  const price = (units: number) => formatUsd(priceMicros([{ meter: 'webhooks.delivery_16k', units, resourceId: '' }]));
  const units = items.reduce((sum, item) => sum + item.delivery_units, 0);
  const unrepaired = items.reduce((sum, item) => sum + (item.repaired_by === null ? item.delivery_units : 0), 0);
  return {
    items,
    delivery_units: units,
    total_usd: price(units),
    repaired_count: items.filter((item) => item.repaired_by !== null).length,
    unrepaired_delivery_units: unrepaired,
    unrepaired_total_usd: price(unrepaired),
  };
}

/**
 * The delivery to replay with its message, content, endpoint and the team's counters. The message row is
 * locked (FOR NO KEY UPDATE) so replays of one message take generations one after another and a redaction
 * cannot slip between the content check and the insert.
 */
export async function lockReplaySource(tx: EntityManager, teamId: string, id: string): Promise<ReplaySourceRow> {
  const owned: { message_id: string }[] = await tx.query(
    `SELECT message_id FROM deliveries WHERE id = $1 AND team_id = $2`,
    [id, teamId],
  );
  if (!owned[0]) throw notFound('delivery');
  await tx.query(`SELECT 1 FROM messages WHERE id = $1 FOR NO KEY UPDATE`, [owned[0].message_id]);
  return (await readReplaySources(tx, teamId, [id]))[0]!;
}

async function readReplaySources(
  db: EntityManager,
  teamId: string,
  ids: readonly string[],
): Promise<ReplaySourceRow[]> {
  return db.query(
    `SELECT d.id, d.team_id, d.tenant_id, d.message_id, d.endpoint_id, d.event_type, d.status, d.body,
            d.content_type, m.redacted_at, c.body AS content,
            message_retained_until(m.retained_until, m.created_at, m.expires_at, s.payload_retention_days, t.deleted_at)
              AS retained_until,
            e.status AS endpoint_status, e.deleted_at IS NOT NULL AS endpoint_deleted, e.transform::text AS transform,
            (SELECT max(generation) FROM deliveries g
              WHERE g.message_id = d.message_id AND g.endpoint_id = d.endpoint_id) AS generation,
            (SELECT coalesce(sum(pending), 0) FROM team_queue_counts WHERE team_id = d.team_id) AS pending,
            (SELECT coalesce(sum(content_bytes), 0) FROM team_queue_counts WHERE team_id = d.team_id) AS content_bytes,
            ${repairedBySql('d')} AS repaired_by
       FROM deliveries d
       JOIN messages m ON m.id = d.message_id
       JOIN tenants t ON t.id = d.tenant_id
       JOIN endpoints e ON e.id = d.endpoint_id
       LEFT JOIN message_contents c ON c.message_id = d.message_id
       LEFT JOIN team_settings s ON s.team_id = d.team_id
      WHERE d.id = ANY($1::text[]) AND d.team_id = $2`,
    [ids, teamId],
  );
}

/** The endpoint's current transform over the original content; null when it has none (the content as is). */
function currentTransform(source: ReplaySourceRow): Buffer | null {
  if (source.transform === null) return null;
  const rules = compileRules(null, source.transform);
  const content = source.content!;
  const failed = (message: string) =>
    new ServiceError('transform_failed', `the transform of endpoint ${source.endpoint_id} failed: ${message}`, {
      resourceId: source.endpoint_id,
    });
  if (!source.content_type.startsWith('application/json')) throw failed('only JSON bodies can be transformed');
  const text = content.toString('utf8');
  const result = rules.transform!.apply(text, parseStrict(text));
  if (!result.ok) throw failed(result.message);
  return Buffer.from(result.output, 'utf8');
}

/** Why a delivery cannot be replayed now, as the error the replay would answer; null when it can. */
function replayProblem(source: ReplaySourceRow, now: Date): ServiceError | null {
  if (!FINISHED.has(source.status) || source.status === 'canceled')
    return new ServiceError(
      'invalid_state',
      source.status === 'canceled'
        ? 'a canceled delivery cannot be replayed'
        : `a ${source.status} delivery is still pending: replay it once it has finished`,
    );
  if (source.endpoint_deleted) return new ServiceError('invalid_state', 'the endpoint was deleted');
  if (source.endpoint_status === 'disabled')
    return new ServiceError('invalid_state', 'the endpoint is disabled; resume it first');
  if (source.redacted_at !== null)
    return new ServiceError('payload_expired', 'the message was redacted: nothing can be replayed');
  if (source.content === null || source.retained_until <= now)
    return new ServiceError('payload_expired', 'the message content is past its retention');
  return null;
}
