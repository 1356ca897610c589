import type { DataSource, EntityManager } from 'typeorm';
import { checkReceiverUrl, type UrlPolicy } from '@svc/egress';
import { generateSvcSecret } from '@svc/signing';
import { addMs, SECOND, type Clock } from '../common/clock.js';
import type { Actor, CallContext } from '../common/context.js';
import { assertCurrent } from '../common/etag.js';
import { notFound, ServiceError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, encodeCursor, parseLimit, type ListScope, type Page } from '../common/paging.js';
import type { Sealer } from '../common/sealing.js';
import { inTransaction, lockTeam, reader, queryRows } from '../common/transaction.js';
import { assertAdministers } from '../feature-flags/environment-access.js';
import type { ListPlatformPageQuery } from '../feature-flags/feature-flag.inputs.js';
import { WEBHOOK_TEST, type PlatformEventWriter } from './platform-events.js';
import {
  MAX_ACTIVE_SUBSCRIPTIONS,
  type CreateSubscriptionInput,
  type RotateSubscriptionSecretInput,
  type UpdateSubscriptionInput,
} from './subscription.inputs.js';
import {
  SUBSCRIPTION_COLUMNS,
  toSubscriptionView,
  type SubscriptionRow,
  type SubscriptionView,
} from './subscription.view.js';

export interface SubscriptionServiceDeps {
  db: DataSource;
  clock: Clock;
  sealer: Sealer;
  urlPolicy: UrlPolicy;
  events: PlatformEventWriter;
}

export interface SubscriptionWithSecret {
  subscription: SubscriptionView;
  /** whsec_...: shown on create and rotate only. */
  secret: string;
}

/** Where a sealed subscription secret belongs: a copied value does not open elsewhere. */
export const subscriptionSecretContext = (id: string, version: number) => `subscription:${id}:secret:${version}`;

/**
 * Event subscriptions (spec/event-subscriptions.md, docs/platform.md): the resource, its secret and rotation, the
 * test event. A key changes a subscription only when it administers every environment the subscription names,
 * before and after the change.
 */
export class SubscriptionService {
  constructor(private readonly deps: SubscriptionServiceDeps) {}

  private view(row: SubscriptionRow): SubscriptionView {
    return toSubscriptionView(row, this.deps.clock.now());
  }

  private checkUrl(url: string): void {
    const check = checkReceiverUrl(url, this.deps.urlPolicy);
    if (!check.ok) throw new ServiceError(check.code, check.message, { field: 'url' });
  }

  /** 422 for an environment that is not the team's, 403 for one the key may not administer. */
  private async checkEnvironments(tx: EntityManager, actor: Actor, ids: readonly string[]): Promise<void> {
    const rows: { id: string }[] = await tx.query(
      `SELECT id FROM feature_flag_environments WHERE team_id = $1 AND id = ANY($2::text[])`,
      [actor.teamId, ids],
    );
    const unknown = ids.find((id) => !rows.some((row) => row.id === id));
    if (unknown !== undefined)
      throw new ServiceError('invalid_field', `environment_ids: no environment ${unknown}`, {
        field: 'environment_ids',
      });
    assertAdministers(actor, ids);
  }

  private async checkQuota(tx: EntityManager, teamId: string): Promise<void> {
    const rows: { n: string }[] = await tx.query(
      `SELECT count(*) AS n FROM event_subscriptions WHERE team_id = $1 AND deleted_at IS NULL AND enabled`,
      [teamId],
    );
    if (Number(rows[0]?.n ?? 0) >= MAX_ACTIVE_SUBSCRIPTIONS)
      throw new ServiceError(
        'quota_exceeded',
        `a team has at most ${MAX_ACTIVE_SUBSCRIPTIONS} active (enabled) event subscriptions`,
      );
  }

  async createSubscription(ctx: CallContext, input: CreateSubscriptionInput): Promise<SubscriptionWithSecret> {
    this.checkUrl(input.url);
    return inTransaction(this.deps.db, ctx, async (tx) => {
      await this.checkEnvironments(tx, ctx.actor, input.environment_ids);
      await lockTeam(tx, ctx.actor.teamId);
      await this.checkQuota(tx, ctx.actor.teamId);
      const id = newId('subscription', this.deps.clock);
      const secret = generateSvcSecret();
      const now = this.deps.clock.now();
      const rows: SubscriptionRow[] = await tx.query(
        `INSERT INTO event_subscriptions (id, team_id, url, events, environment_ids, description, format, enabled,
           version, secret_sealed, secret_version, secret_created_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, true, 1, $8, 1, $9, $10, $10) RETURNING ${SUBSCRIPTION_COLUMNS}`,
        [
          id,
          ctx.actor.teamId,
          input.url,
          input.events,
          input.environment_ids,
          input.description,
          input.format,
          this.deps.sealer.seal(secret, subscriptionSecretContext(id, 1)),
          ctx.actor.keyId,
          now,
        ],
      );
      return { subscription: this.view(rows[0]!), secret };
    });
  }

  async listSubscriptions(ctx: CallContext, query: ListPlatformPageQuery): Promise<Page<SubscriptionView>> {
    const limit = parseLimit(query.limit);
    const scope: ListScope = { teamId: ctx.actor.teamId, list: 'event_subscriptions', filters: {} };
    const after = decodeCursor(scope, query.cursor);
    const rows: SubscriptionRow[] = await reader(this.deps.db, ctx).query(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM event_subscriptions
        WHERE team_id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3`,
      [ctx.actor.teamId, after, limit + 1],
    );
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    return {
      data: page.map((row) => this.view(row)),
      nextCursor: more ? encodeCursor(scope, page[page.length - 1]!.id) : null,
    };
  }

  async getSubscription(ctx: CallContext, id: string): Promise<SubscriptionView> {
    return this.view(await this.findRow(reader(this.deps.db, ctx), ctx.actor.teamId, id, false));
  }

  private async findRow(tx: EntityManager, teamId: string, id: string, lock: boolean): Promise<SubscriptionRow> {
    const rows: SubscriptionRow[] = await tx.query(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM event_subscriptions
        WHERE id = $1 AND team_id = $2 AND deleted_at IS NULL ${lock ? 'FOR NO KEY UPDATE' : ''}`,
      [id, teamId],
    );
    if (!rows[0]) throw notFound('event subscription');
    return rows[0];
  }

  /** Locks the subscription for a change by this key: If-Match (when given) must be current. */
  private async lockForChange(tx: EntityManager, ctx: CallContext, id: string, ifMatch: string) {
    const row = await this.findRow(tx, ctx.actor.teamId, id, true);
    if (ifMatch) assertCurrent(ifMatch, this.view(row).etag);
    assertAdministers(ctx.actor, row.environment_ids);
    return row;
  }

  async updateSubscription(
    ctx: CallContext,
    id: string,
    ifMatch: string,
    input: UpdateSubscriptionInput,
  ): Promise<SubscriptionView> {
    if (input.url !== undefined) this.checkUrl(input.url);
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const row = await this.lockForChange(tx, ctx, id, ifMatch);
      if (input.environment_ids) await this.checkEnvironments(tx, ctx.actor, input.environment_ids);
      const next = {
        url: input.url ?? row.url,
        events: input.events ?? row.events,
        environment_ids: input.environment_ids ?? row.environment_ids,
        description: input.description ?? row.description,
        format: input.format ?? row.format,
        enabled: input.enabled ?? row.enabled,
      };
      const same = (a: readonly string[], b: readonly string[]) =>
        a.length === b.length && a.every((x, i) => x === b[i]);
      const changed =
        next.url !== row.url ||
        !same(next.events, row.events) ||
        !same(next.environment_ids, row.environment_ids) ||
        next.description !== row.description ||
        next.format !== row.format ||
        next.enabled !== row.enabled;
      if (!changed) return this.view(row);
      if (next.enabled && !row.enabled) {
        await lockTeam(tx, ctx.actor.teamId);
        await this.checkQuota(tx, ctx.actor.teamId);
      }
      const now = this.deps.clock.now();
      const rows: SubscriptionRow[] = await queryRows<SubscriptionRow>(
        tx,
        `UPDATE event_subscriptions SET url = $2, events = $3, environment_ids = $4, description = $5, format = $6,
                enabled = $7, disabled_reason = CASE WHEN $7 THEN NULL ELSE $8 END, version = version + 1,
                updated_at = $9
          WHERE id = $1 RETURNING ${SUBSCRIPTION_COLUMNS}`,
        [
          id,
          next.url,
          next.events,
          next.environment_ids,
          next.description,
          next.format,
          next.enabled,
          row.enabled ? 'disabled_by_user' : row.disabled_reason,
          now,
        ],
      );
      // Disabling stops its deliveries: nothing queued is sent to a subscription its owner switched off.
      if (row.enabled && !next.enabled) await cancelPendingDeliveries(tx, id, now);
      return this.view(rows[0]!);
    });
  }

  /** Soft delete; pending deliveries are canceled, one in progress may still complete. */
  async deleteSubscription(
    ctx: CallContext,
    id: string,
    ifMatch: string,
  ): Promise<{ id: string; deleted: true; inFlightMayComplete: boolean }> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      await this.lockForChange(tx, ctx, id, ifMatch);
      const now = this.deps.clock.now();
      await tx.query(
        `UPDATE event_subscriptions SET deleted_at = $2, enabled = false, disabled_reason = 'deleted',
                version = version + 1, updated_at = $2
          WHERE id = $1`,
        [id, now],
      );
      const inFlight = await cancelPendingDeliveries(tx, id, now);
      return { id, deleted: true, inFlightMayComplete: inFlight > 0 };
    });
  }

  /**
   * A new secret, shown once. The previous one keeps signing until secret_rotation_ends_at (every delivery
   * carries one v1 per active secret); overlap_seconds 0 retires it at once. 409 invalid_state when a previous
   * secret is still in its overlap and overlap_seconds is not 0 (at most two secrets sign at any time).
   */
  async rotateSecret(
    ctx: CallContext,
    id: string,
    ifMatch: string,
    input: RotateSubscriptionSecretInput,
  ): Promise<SubscriptionWithSecret> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const row = await this.lockForChange(tx, ctx, id, ifMatch);
      const now = this.deps.clock.now();
      if (input.overlap_seconds > 0 && row.secret_rotation_ends_at && row.secret_rotation_ends_at > now)
        throw new ServiceError(
          'invalid_state',
          'the previous secret is still in its overlap: wait until secret_rotation_ends_at, or rotate with overlap_seconds 0',
        );
      const secret = generateSvcSecret();
      const version = row.secret_version + 1;
      const endsAt = input.overlap_seconds > 0 ? addMs(now, input.overlap_seconds * SECOND) : null;
      const rows: SubscriptionRow[] = await queryRows<SubscriptionRow>(
        tx,
        `UPDATE event_subscriptions
            SET previous_secret_sealed = CASE WHEN $5::timestamptz IS NULL THEN NULL ELSE secret_sealed END,
                previous_secret_version = CASE WHEN $5::timestamptz IS NULL THEN NULL ELSE secret_version END,
                secret_sealed = $2, secret_version = $3, secret_created_by = $4, secret_rotation_ends_at = $5,
                version = version + 1, updated_at = $6
          WHERE id = $1 RETURNING ${SUBSCRIPTION_COLUMNS}`,
        [
          id,
          this.deps.sealer.seal(secret, subscriptionSecretContext(id, version)),
          version,
          ctx.actor.keyId,
          endsAt,
          now,
        ],
      );
      return { subscription: this.view(rows[0]!), secret };
    });
  }

  /**
   * The current secret, for an idempotent replay of create or rotate: only to the key that made it, and only
   * while the subscription is still at the version the response showed (nothing rotated or changed since).
   */
  async secretForReplay(ctx: CallContext, id: string, version: string): Promise<string | null> {
    const rows: { secret_sealed: Buffer; secret_version: number; secret_created_by: string; version: string }[] =
      await reader(this.deps.db, ctx).query(
        `SELECT secret_sealed, secret_version, secret_created_by, version FROM event_subscriptions
          WHERE id = $1 AND team_id = $2 AND deleted_at IS NULL`,
        [id, ctx.actor.teamId],
      );
    const row = rows[0];
    if (!row || String(row.version) !== version || row.secret_created_by !== ctx.actor.keyId) return null;
    return this.deps.sealer.open(row.secret_sealed, subscriptionSecretContext(id, row.secret_version));
  }

  /** Queues a feature_flags.webhook.test event for this subscription alone; its data holds only endpoint_id. */
  async sendTestEvent(ctx: CallContext, id: string): Promise<{ eventId: string; endpointId: string }> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const row = await this.lockForChange(tx, ctx, id, '');
      if (!row.enabled)
        throw new ServiceError('invalid_state', 'the subscription is disabled: enable it (PATCH enabled true) first');
      const event = await this.deps.events.write(tx, {
        teamId: ctx.actor.teamId,
        type: WEBHOOK_TEST,
        environmentId: null,
        revision: null,
        data: { endpoint_id: id },
        subscriptionId: id,
      });
      return { eventId: event.id, endpointId: id };
    });
  }
}

/** Cancels what has not started; returns how many are in flight now (leased) and may still complete. */
export async function cancelPendingDeliveries(tx: EntityManager, subscriptionId: string, now: Date): Promise<number> {
  const rows: { in_flight: boolean }[] = await queryRows<{ in_flight: boolean }>(
    tx,
    `UPDATE subscription_deliveries SET status = 'canceled', next_attempt_at = NULL, updated_at = $2
      WHERE subscription_id = $1 AND status = 'pending'
      RETURNING lease_until IS NOT NULL AND lease_until > $2 AS in_flight`,
    [subscriptionId, now],
  );
  return rows.filter((row) => row.in_flight).length;
}
