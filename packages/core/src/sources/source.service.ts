import type { DataSource, EntityManager } from 'typeorm';
import type { Limits } from '../catalog/limits.js';
import { addMs, SECOND, type Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { assertCurrent } from '../common/etag.js';
import { invalidField, notFound, ServiceError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, parseLimit, toPage, type ListScope, type Page } from '../common/paging.js';
import type { Sealer } from '../common/sealing.js';
import { inTransaction, lockTeam, reader } from '../common/transaction.js';
import type {
  CreateSourceInput,
  ListSourcesQuery,
  RotateSourceSecretInput,
  RotateSourceTokenInput,
  UpdateSourceInput,
} from './source.inputs.js';
import {
  addSecret,
  addToken,
  bumpVersion,
  newToken,
  readSecretsMadeBy,
  retireCredentials,
} from './source-credentials.js';
import { findSourceByToken, type ReceivingSource } from './source-receiving.js';
import { billingKeyRefused, checkMapping, inactiveEventType, settingsUpdate, withoutKind } from './source-rules.js';
import { deleteSources } from './source-writes.js';
import { toSourceView, type SourceRow, type SourceView } from './source.view.js';
import { parseVerification, verifierFor } from './verifiers/index.js';

export interface SourceServiceDeps {
  db: DataSource;
  clock: Clock;
  limits: Limits;
  sealer: Sealer;
}

/** A source as created or rotated: the receive token and a generated secret are shown in this answer only. */
export interface SourceWithSecrets {
  source: SourceView;
  /** The receive token (the secret part of receive_url), on create and rotate_token. */
  token: string | null;
  /** A generated verification secret (standard_webhooks, bearer), on create and rotate_secret. */
  secret: string | null;
}

const SELECT_SOURCE = `
  SELECT s.id, s.tenant_id, s.name, s.kind, s.settings, s.event_type, s.event_type_path, s.event_type_prefix,
         s.billing_key_id, s.status, s.metadata, s.version::text AS version, s.created_at, s.updated_at,
         (SELECT max(version) FROM source_secrets WHERE source_id = s.id) AS secret_version,
         (SELECT max(version) FROM source_tokens WHERE source_id = s.id) AS token_version,
         (SELECT max(expires_at) FROM source_secrets WHERE source_id = s.id AND expires_at > $1) AS secret_rotation_ends_at,
         (SELECT max(expires_at) FROM source_tokens WHERE source_id = s.id AND expires_at > $1) AS token_rotation_ends_at
    FROM sources s`;

/**
 * Sources: the resource (create, list, read, update, delete, rotate secret, rotate token) and the lookup the
 * receive route makes by token. Secrets and tokens are sealed at rest; a token is found by its SHA-256 through a
 * unique index, so the lookup never compares the token itself.
 */
export class SourceService {
  constructor(private readonly deps: SourceServiceDeps) {}

  async createSource(ctx: CallContext, input: CreateSourceInput): Promise<SourceWithSecrets> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const { clock, limits } = this.deps;
      const teamId = ctx.actor.teamId;
      const now = clock.now();
      await lockTeam(tx, teamId);
      const verification = parseVerification(input.verification);
      // A given secret is used as is (parseVerification checked it); standard_webhooks and bearer make one when
      // none is given, shown in this answer only.
      const generated = verification.secret === undefined ? verifierFor(verification.kind).generateSecret() : null;
      const secret = verification.secret ?? generated;
      if (secret === null)
        throw invalidField('verification.secret', `${verification.kind} needs the secret the provider issued`);
      const mapping = checkMapping(input);
      const context: { tenant_status: string | null; sources: string; key_ok: boolean; type_active: boolean | null }[] =
        await tx.query(
          `SELECT (SELECT status FROM tenants WHERE id = $2 AND team_id = $1) AS tenant_status,
                  (SELECT count(*) FROM sources WHERE team_id = $1 AND deleted_at IS NULL) AS sources,
                  EXISTS (SELECT 1 FROM api_keys WHERE id = $3 AND team_id = $1 AND kind = 'secret'
                            AND revoked_at IS NULL AND webhooks_allowed) AS key_ok,
                  (SELECT NOT archived FROM event_types WHERE team_id = $1 AND name = $4) AS type_active`,
          [teamId, input.tenant_id, input.billing_key_id ?? ctx.actor.keyId, mapping.eventType],
        );
      const row = context[0]!;
      if (row.tenant_status !== 'active') throw invalidField('tenant_id', 'tenant must be an active tenant');
      if (Number(row.sources) >= limits.max_sources.value)
        throw new ServiceError(
          'quota_exceeded',
          `the team has reached its limit of ${limits.max_sources.value} sources`,
        );
      if (!row.key_ok) throw billingKeyRefused();
      if (mapping.eventType !== null && row.type_active !== true) throw inactiveEventType(mapping.eventType);

      const id = newId('source', clock);
      const token = newToken();
      await tx.query(
        `INSERT INTO sources (id, team_id, tenant_id, name, kind, settings, event_type, event_type_path,
                              event_type_prefix, billing_key_id, status, metadata, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'active', $11, $12, $12)`,
        [
          id,
          teamId,
          input.tenant_id,
          input.name,
          verification.kind,
          JSON.stringify(verification.settings),
          mapping.eventType,
          mapping.eventTypePath,
          mapping.eventTypePrefix,
          input.billing_key_id ?? ctx.actor.keyId,
          JSON.stringify(input.metadata),
          now,
        ],
      );
      await addSecret(tx, this.deps.sealer, id, 1, secret, generated !== null, ctx.actor.keyId, now);
      await addToken(tx, this.deps.sealer, id, 1, token, ctx.actor.keyId, now);
      return { source: await this.read(tx, teamId, id), token, secret: generated };
    });
  }

  async listSources(ctx: CallContext, query: ListSourcesQuery): Promise<Page<SourceView>> {
    const limit = parseLimit(query.limit);
    const scope: ListScope = {
      teamId: ctx.actor.teamId,
      list: 'sources',
      filters: { tenant_id: query.tenant_id ?? null },
    };
    const after = decodeCursor(scope, query.cursor);
    const rows: SourceRow[] = await reader(this.deps.db, ctx).query(
      `${SELECT_SOURCE}
        WHERE s.team_id = $2 AND s.deleted_at IS NULL AND ($3::text IS NULL OR s.tenant_id = $3)
          AND ($4::text IS NULL OR s.id > $4)
        ORDER BY s.id
        LIMIT $5`,
      [this.deps.clock.now(), ctx.actor.teamId, query.tenant_id ?? null, after, limit + 1],
    );
    return toPage(scope, rows, limit, toSourceView);
  }

  async getSource(ctx: CallContext, id: string): Promise<SourceView> {
    return this.read(reader(this.deps.db, ctx), ctx.actor.teamId, id);
  }

  async updateSource(ctx: CallContext, id: string, ifMatch: string, input: UpdateSourceInput): Promise<SourceView> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const current = await this.lock(tx, ctx.actor.teamId, id);
      assertCurrent(ifMatch, current.etag);
      const settings =
        input.verification === undefined
          ? current.verification
          : { kind: current.verification.kind, ...settingsUpdate(current.verification.kind, input.verification) };
      const merged = {
        event_type: input.event_type === undefined ? current.event_type : input.event_type,
        event_type_path: input.event_type_path === undefined ? current.event_type_path : input.event_type_path,
        event_type_prefix: input.event_type_prefix === undefined ? current.event_type_prefix : input.event_type_prefix,
      };
      // Setting one way of mapping clears the other.
      if (input.event_type) merged.event_type_path = merged.event_type_prefix = null;
      if (input.event_type_path) merged.event_type = null;
      const mapping = checkMapping(merged);
      const billingKeyId = input.billing_key_id ?? current.billing_key_id;
      const checks: { key_ok: boolean; type_active: boolean | null }[] = await tx.query(
        `SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = $2 AND team_id = $1 AND kind = 'secret'
                          AND revoked_at IS NULL AND webhooks_allowed) AS key_ok,
                (SELECT NOT archived FROM event_types WHERE team_id = $1 AND name = $3) AS type_active`,
        [ctx.actor.teamId, billingKeyId, mapping.eventType],
      );
      if (!checks[0]!.key_ok) throw billingKeyRefused();
      if (mapping.eventType !== null && mapping.eventType !== current.event_type && checks[0]!.type_active !== true)
        throw inactiveEventType(mapping.eventType);
      const { kind: _kind, ...settingsOnly } = settings;
      const next = {
        name: input.name ?? current.name,
        settings: settingsOnly,
        status: input.status ?? current.status,
        metadata: input.metadata ?? current.metadata,
      };
      const unchanged =
        next.name === current.name &&
        JSON.stringify(next.settings) === JSON.stringify(withoutKind(current.verification)) &&
        next.status === current.status &&
        JSON.stringify(next.metadata) === JSON.stringify(current.metadata) &&
        mapping.eventType === current.event_type &&
        mapping.eventTypePath === current.event_type_path &&
        mapping.eventTypePrefix === current.event_type_prefix &&
        billingKeyId === current.billing_key_id;
      if (unchanged) return current;
      await tx.query(
        `UPDATE sources SET name = $2, settings = $3, status = $4, metadata = $5, event_type = $6, event_type_path = $7,
                event_type_prefix = $8, billing_key_id = $9, version = version + 1, updated_at = $10
          WHERE id = $1`,
        [
          id,
          next.name,
          JSON.stringify(next.settings),
          next.status,
          JSON.stringify(next.metadata),
          mapping.eventType,
          mapping.eventTypePath,
          mapping.eventTypePrefix,
          billingKeyId,
          this.deps.clock.now(),
        ],
      );
      return this.read(tx, ctx.actor.teamId, id);
    });
  }

  /** DELETE: the receive URL stops answering at once (its tokens go with the source). */
  async deleteSource(ctx: CallContext, id: string, ifMatch: string): Promise<void> {
    await inTransaction(this.deps.db, ctx, async (tx) => {
      const current = await this.lock(tx, ctx.actor.teamId, id);
      assertCurrent(ifMatch, current.etag);
      await deleteSources(tx, { ids: [id] }, this.deps.clock.now());
    });
  }

  /**
   * A new verification secret: the provider's (given) or generated (standard_webhooks, bearer). The previous one
   * keeps verifying for overlap_seconds (0 retires it at once). 409 invalid_state while a previous one is still in
   * its overlap, unless overlap_seconds is 0.
   */
  async rotateSecret(
    ctx: CallContext,
    id: string,
    ifMatch: string,
    input: RotateSourceSecretInput,
  ): Promise<SourceWithSecrets> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const now = this.deps.clock.now();
      const current = await this.lock(tx, ctx.actor.teamId, id);
      assertCurrent(ifMatch, current.etag);
      if (current.secret_rotation_ends_at !== null && input.overlap_seconds !== 0)
        throw new ServiceError(
          'invalid_state',
          'a previous secret is still in its overlap; rotate with overlap_seconds 0',
        );
      const verifier = verifierFor(current.verification.kind);
      const generated = input.secret === undefined ? verifier.generateSecret() : null;
      const secret = input.secret ?? generated;
      if (secret === null) throw invalidField('secret', `${current.verification.kind} needs the provider's new secret`);
      const problem = input.secret === undefined ? null : verifier.checkSecret(input.secret);
      if (problem) throw invalidField('secret', problem);
      await retireCredentials(tx, 'source_secrets', id, addMs(now, input.overlap_seconds * SECOND));
      await addSecret(
        tx,
        this.deps.sealer,
        id,
        current.secret_version + 1,
        secret,
        generated !== null,
        ctx.actor.keyId,
        now,
      );
      await bumpVersion(tx, id, now);
      return { source: await this.read(tx, ctx.actor.teamId, id), token: null, secret: generated };
    });
  }

  /** A new receive URL; the previous one keeps answering for overlap_seconds. Same overlap rule as secrets. */
  async rotateToken(
    ctx: CallContext,
    id: string,
    ifMatch: string,
    input: RotateSourceTokenInput,
  ): Promise<SourceWithSecrets> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const now = this.deps.clock.now();
      const current = await this.lock(tx, ctx.actor.teamId, id);
      assertCurrent(ifMatch, current.etag);
      if (current.token_rotation_ends_at !== null && input.overlap_seconds !== 0)
        throw new ServiceError(
          'invalid_state',
          'a previous receive URL is still in its overlap; rotate with overlap_seconds 0',
        );
      await retireCredentials(tx, 'source_tokens', id, addMs(now, input.overlap_seconds * SECOND));
      const token = newToken();
      await addToken(tx, this.deps.sealer, id, current.token_version + 1, token, ctx.actor.keyId, now);
      await bumpVersion(tx, id, now);
      return { source: await this.read(tx, ctx.actor.teamId, id), token, secret: null };
    });
  }

  /**
   * For idempotent replays of create and rotate: the token or generated secret of that version, shown again only
   * to the key that made it and only while it is current.
   */
  async currentSecretsMadeBy(
    ctx: CallContext,
    id: string,
    versions: { token?: number; secret?: number },
  ): Promise<{ token: string | null; secret: string | null }> {
    return readSecretsMadeBy(reader(this.deps.db, ctx), this.deps.sealer, ctx.actor, id, versions);
  }

  /** The receive route's lookup: one round trip by the token's SHA-256; null for unknown, retired or deleted. */
  async findByToken(token: string): Promise<ReceivingSource | null> {
    return findSourceByToken(this.deps.db, this.deps.sealer, token, this.deps.clock.now());
  }

  private async lock(tx: EntityManager, teamId: string, id: string): Promise<SourceView> {
    const locked: unknown[] = await tx.query(
      `SELECT 1 FROM sources WHERE id = $1 AND team_id = $2 AND deleted_at IS NULL FOR NO KEY UPDATE`,
      [id, teamId],
    );
    if (locked.length === 0) throw notFound('source');
    return this.read(tx, teamId, id);
  }

  private async read(db: EntityManager, teamId: string, id: string): Promise<SourceView> {
    const rows: SourceRow[] = await db.query(
      `${SELECT_SOURCE} WHERE s.id = $2 AND s.team_id = $3 AND s.deleted_at IS NULL`,
      [this.deps.clock.now(), id, teamId],
    );
    if (!rows[0]) throw notFound('source');
    return toSourceView(rows[0]);
  }
}
