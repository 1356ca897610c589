import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { resolvePointer, toValue } from '@svc/json';
import { refusalFactSql } from '../analytics/analytics-facts.js';
import { DAY, HOUR, type Clock } from '../common/clock.js';
import { ServiceError, isServiceError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { unstorableTextProblem } from '../common/validation.js';
import { isEventTypeName } from '../event-types/event-type.inputs.js';
import type { OperationalEventService } from '../events/operational-event.service.js';
import { capturedBody, type MessageBody } from '../messages/message-body.js';
import type { MessageService } from '../messages/message.service.js';
import type { RateLimitService } from '../rate-limits/rate-limit.service.js';
import type { ReceivingSource } from './source-receiving.js';
import type { SourceService } from './source.service.js';
import { verifierFor, type InboundRequest } from './verifiers/index.js';

/** A duplicate capture's analytics fact, in the placeholders of the duplicate's lookup. */
const DUPLICATE_FACT = refusalFactSql('duplicates', { teamId: '$3', tenantId: '$4', sourceId: '$1', at: '$5' });
/** A capture that did not verify, in analytics. */
const REJECTED_FACT = refusalFactSql('rejected_auth', { teamId: '$1', tenantId: '$2', sourceId: '$3', at: '$4' });

/** Provider event IDs are kept 35 days; without one, the same body is a duplicate for 24 hours. */
export const EVENT_ID_RETENTION_MS = 35 * DAY;
export const BODY_DEDUP_MS = 24 * HOUR;
/** A paused source answers 503 with this Retry-After, so providers keep the request and send it again later. */
export const PAUSED_RETRY_AFTER_SECONDS = 60;

export interface ReceiveRequest extends InboundRequest {
  token: string;
  contentType: string | undefined;
}

export interface ReceiveAnswer {
  status: number;
  contentType: string;
  body: string;
}

export interface ReceiveServiceDeps {
  db: DataSource;
  clock: Clock;
  sources: SourceService;
  messages: MessageService;
  rateLimits: RateLimitService;
  events: OperationalEventService;
}

/**
 * POST /receive/{token}: find the source by its token, take a token from the source's bucket, verify the request
 * with its kind's verifier on the original bytes and the URL as called, deduplicate, and store the capture as a
 * message of the source's tenant charged to its billing key; answer only once the message and its charge are
 * stored. Refusals throw the documented errors; verification failures and budget refusals also emit their
 * operational events (docs/sources.md).
 */
export class ReceiveService {
  constructor(private readonly deps: ReceiveServiceDeps) {}

  async receive(request: ReceiveRequest): Promise<ReceiveAnswer> {
    const { sources, rateLimits } = this.deps;
    const source = await sources.findByToken(request.token);
    if (!source) throw new ServiceError('not_found', 'no source answers at this receive URL');
    if (source.suspended) throw new ServiceError('account_suspended', 'the account or its webhooks use is suspended');
    await rateLimits.takeFor(source.id, 'source', {
      teamId: source.teamId,
      tenantId: source.tenantId,
      sourceId: source.id,
    });
    if (source.status === 'paused')
      throw new ServiceError('temporarily_unavailable', 'the source is paused; send the request again later', {
        retryAfter: PAUSED_RETRY_AFTER_SECONDS,
      });
    const verifier = verifierFor(source.kind);
    const verdict = verifier.verify(request, source.settings, source.secrets, this.deps.clock.now());
    if (!verdict.ok) {
      await this.emit(
        'webhooks.source.rejected',
        source,
        { source_id: source.id, reason: verdict.reason },
        { rejectedAuth: true },
      );
      throw new ServiceError('unauthorized', `the request does not verify (${verdict.reason})`);
    }
    if (verdict.reply) return verdict.reply;
    if (!source.billingKeyUsable) {
      await this.emit('webhooks.budget.blocked', source, {
        source_id: source.id,
        billing_key_id: source.billingKeyId,
        reason: 'billing_key_unusable',
      });
      throw new ServiceError('billing_required', "the source's billing key is revoked or may not use webhooks");
    }
    const body = capturedBody(request.rawBody, request.contentType);
    const eventType = eventTypeOf(source, body);
    // An event ID read from a signed body (payments, chat) may still hold what Postgres cannot store.
    if (verdict.eventId !== null && unstorableTextProblem(verdict.eventId) !== null)
      throw new ServiceError('invalid_field', "the provider's event ID holds a NUL or a lone surrogate", {
        field: 'event_id',
      });
    const keys = eventKeys(verdict.eventId, verifier.eventIdSigned, request.rawBody);
    try {
      const { messageId, duplicate } = await this.capture(source, body, eventType, keys);
      return verifier.accepted(messageId, duplicate);
    } catch (error) {
      if (isServiceError(error) && (error.code === 'billing_required' || error.code === 'spending_limit'))
        await this.emit('webhooks.budget.blocked', source, {
          source_id: source.id,
          billing_key_id: source.billingKeyId,
          reason: error.code,
        });
      throw error;
    }
  }

  /**
   * One transaction: claim the event keys for the message's ID, chosen here (a concurrent twin waits on the unique
   * index and then sees this one's message), and admit the message with the source's billing key as payer. When a
   * key is already held (live), the capture is a duplicate of that key's message (the event ID's before the
   * body's): the keys this one claimed are given back and nothing is admitted or charged.
   */
  private async capture(
    source: ReceivingSource,
    body: MessageBody,
    eventType: string,
    keys: readonly EventKey[],
  ): Promise<{ messageId: string; duplicate: boolean }> {
    const { db, clock, messages } = this.deps;
    return db.transaction(async (tx) => {
      const now = clock.now();
      const messageId = newId('message', clock);
      // In key order, so two captures claiming two keys each never wait for each other in opposite orders.
      const claimed: { event_key: string }[] = await tx.query(
        `INSERT INTO source_event_ids AS e (source_id, event_key, message_id, expires_at)
         SELECT $1, k.event_key, $2, k.expires_at
           FROM unnest($3::text[], $4::timestamptz[]) WITH ORDINALITY AS k(event_key, expires_at, n) ORDER BY k.n
         ON CONFLICT (source_id, event_key) DO UPDATE SET message_id = EXCLUDED.message_id, expires_at = EXCLUDED.expires_at
          WHERE e.expires_at <= $5
         RETURNING e.event_key`,
        [source.id, messageId, keys.map((k) => k.key), keys.map((k) => new Date(now.getTime() + k.keepMs)), now],
      );
      if (claimed.length < keys.length) {
        const taken = new Set(claimed.map((row) => row.event_key));
        if (taken.size > 0)
          await tx.query(
            `DELETE FROM source_event_ids WHERE source_id = $1 AND event_key = ANY($2::text[]) AND message_id = $3`,
            [source.id, [...taken], messageId],
          );
        const held = keys.filter((k) => !taken.has(k.key)).map((k) => k.key);
        const [first]: { message_id: string }[] = await tx.query(
          `WITH fact AS (${DUPLICATE_FACT})
           SELECT message_id FROM source_event_ids WHERE source_id = $1 AND event_key = ANY($2::text[])
            ORDER BY starts_with(event_key, 'id:') DESC LIMIT 1`,
          [source.id, held, source.teamId, source.tenantId, now],
        );
        return { messageId: first!.message_id, duplicate: true };
      }
      const payer = { teamId: source.teamId, keyId: source.billingKeyId };
      await messages.admitMessage(
        { actor: payer, tx },
        { tenant_id: source.tenantId, event_type: eventType, metadata: {} },
        { origin: 'source', sourceId: source.id, payer, body, messageId },
      );
      return { messageId, duplicate: false };
    });
  }

  /** The operational event and, for a capture that did not verify, its rejected_auth analytics fact. */
  private async emit(
    type: 'webhooks.source.rejected' | 'webhooks.budget.blocked',
    source: ReceivingSource,
    data: Record<string, string>,
    options: { rejectedAuth?: boolean } = {},
  ): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      await this.deps.events.emit(tx, [
        { type, teamId: source.teamId, tenantId: source.tenantId, resourceId: source.id, data },
      ]);
      if (options.rejectedAuth)
        await tx.query(REJECTED_FACT, [source.teamId, source.tenantId, source.id, this.deps.clock.now()]);
    });
  }
}

/** A deduplication key of a capture (`id:<provider event ID>` or `body:<SHA-256>`) and how long it is kept. */
interface EventKey {
  key: string;
  keepMs: number;
}

/**
 * What makes a capture a duplicate (docs/sources.md, Deduplication): the provider's event ID when the signature
 * covers it; the body when there is no ID; both when the ID is outside the signature, so a captured request resent
 * under a fresh ID is still a duplicate of its first capture for 24 hours. Sorted by key.
 */
function eventKeys(eventId: string | null, eventIdSigned: boolean, rawBody: Buffer): EventKey[] {
  const byBody = { key: `body:${createHash('sha256').update(rawBody).digest('base64url')}`, keepMs: BODY_DEDUP_MS };
  if (eventId === null) return [byBody];
  const byId = { key: `id:${eventId}`, keepMs: EVENT_ID_RETENTION_MS };
  return eventIdSigned ? [byId] : [byBody, byId];
}

/**
 * The capture's event type: the source's fixed one, or the string at event_type_path in the body (a JSON Pointer
 * into a JSON body, or the form field named by the pointer's single segment in a form-encoded body) behind
 * event_type_prefix. 422 invalid_event_type when nothing usable is there; the catalog check is admission's.
 */
function eventTypeOf(source: ReceivingSource, body: MessageBody): string {
  if (source.eventType !== null) return source.eventType;
  const path = source.eventTypePath!;
  let value: unknown;
  if (body.json !== null) {
    const node = resolvePointer(body.json.root, path);
    value = node === undefined ? undefined : toValue(node);
  } else if (body.contentType.startsWith('application/x-www-form-urlencoded')) {
    value = new URLSearchParams(body.bytes.toString('utf8')).get(path.replace(/^\//, '')) ?? undefined;
  }
  if (typeof value !== 'string' || value === '')
    throw new ServiceError('invalid_event_type', `the capture has no event type at ${path}`, {
      field: 'event_type_path',
    });
  const eventType = `${source.eventTypePrefix ?? ''}${value}`;
  // What no catalog name can be (a NUL, a lone surrogate, any other character) is refused before any query, with
  // the answer of a name that is not in the catalog.
  if (!isEventTypeName(eventType))
    throw new ServiceError('invalid_event_type', `the capture's event type at ${path} is not an event type name`, {
      field: 'event_type',
    });
  return eventType;
}
