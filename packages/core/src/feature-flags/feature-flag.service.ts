import type { DataSource, EntityManager } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { assertCurrent } from '../common/etag.js';
import { notFound, ServiceError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, encodeCursor, parseLimit, type ListScope, type Page } from '../common/paging.js';
import { inTransaction, lockTeam, reader, queryRows } from '../common/transaction.js';
import { FLAG_UPDATED, type PlatformEventWriter } from '../subscriptions/platform-events.js';
import { assertAdministers, assertAdministersAll } from './environment-access.js';
import {
  FLAG_KEY,
  MAX_ENVIRONMENTS_PER_TEAM,
  MAX_FLAGS_PER_ENVIRONMENT,
  type CreateEnvironmentInput,
  type ListPlatformPageQuery,
  type PutFlagInput,
} from './feature-flag.inputs.js';
import {
  toEnvironmentView,
  toFlagView,
  type DeletedFlagView,
  type EnvironmentRow,
  type EnvironmentView,
  type FlagRow,
  type FlagView,
} from './feature-flag.view.js';

export type FlagChange = 'created' | 'updated' | 'deleted';

const ENVIRONMENT_COLUMNS = 'id, team_id, name, revision, created_at, updated_at';
/** The CTE of every flag change: raises the revision of environment $1, stamped with the parameter `now`. */
const raiseRevision = (now: string) =>
  `UPDATE feature_flag_environments SET revision = revision + 1, updated_at = ${now} WHERE id = $1 RETURNING revision`;
/** The flag columns of a row aliased `alias`. */
const prefixed = (alias: string) =>
  FLAG_COLUMNS.split(',')
    .map((column) => `${alias}.${column.trim()}`)
    .join(', ');
const FLAG_COLUMNS =
  'environment_id, key, enabled, description, value, version, revision, created_by, updated_by, created_at, updated_at';

export interface FeatureFlagServiceDeps {
  db: DataSource;
  clock: Clock;
  events: PlatformEventWriter;
}

/**
 * Feature-flag environments and flags (docs/platform.md). Every committed change of a flag raises its environment's
 * revision and writes one feature_flags.flag.updated event in the same transaction; the event names the flag, the
 * kind of change, the changed field names and the acting key, never values.
 */
export class FeatureFlagService {
  constructor(private readonly deps: FeatureFlagServiceDeps) {}

  async createEnvironment(ctx: CallContext, input: CreateEnvironmentInput): Promise<EnvironmentView> {
    assertAdministersAll(ctx.actor);
    return inTransaction(this.deps.db, ctx, async (tx) => {
      await lockTeam(tx, ctx.actor.teamId);
      const existing: { id: string; count: string }[] = await tx.query(
        `SELECT (SELECT id FROM feature_flag_environments WHERE team_id = $1 AND lower(name) = lower($2)) AS id,
                (SELECT count(*) FROM feature_flag_environments WHERE team_id = $1) AS count`,
        [ctx.actor.teamId, input.name],
      );
      const clash = existing[0]?.id;
      if (clash)
        throw new ServiceError('resource_in_use', 'an environment with this name exists', {
          field: 'name',
          resourceId: clash,
        });
      if (Number(existing[0]?.count ?? 0) >= MAX_ENVIRONMENTS_PER_TEAM)
        throw new ServiceError('quota_exceeded', `a team has at most ${MAX_ENVIRONMENTS_PER_TEAM} environments`);
      const now = this.deps.clock.now();
      const rows: EnvironmentRow[] = await tx.query(
        `INSERT INTO feature_flag_environments (id, team_id, name, revision, created_at, updated_at)
         VALUES ($1, $2, $3, 0, $4, $4) RETURNING ${ENVIRONMENT_COLUMNS}`,
        [newId('environment', this.deps.clock), ctx.actor.teamId, input.name, now],
      );
      return toEnvironmentView(rows[0]!);
    });
  }

  async listEnvironments(ctx: CallContext, query: ListPlatformPageQuery): Promise<Page<EnvironmentView>> {
    const limit = parseLimit(query.limit);
    const scope: ListScope = { teamId: ctx.actor.teamId, list: 'feature_flag_environments', filters: {} };
    const after = decodeCursor(scope, query.cursor);
    const rows: EnvironmentRow[] = await reader(this.deps.db, ctx).query(
      `SELECT ${ENVIRONMENT_COLUMNS} FROM feature_flag_environments
        WHERE team_id = $1 AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3`,
      [ctx.actor.teamId, after, limit + 1],
    );
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    return {
      data: page.map(toEnvironmentView),
      nextCursor: more ? encodeCursor(scope, page[page.length - 1]!.id) : null,
    };
  }

  async getEnvironment(ctx: CallContext, id: string): Promise<EnvironmentView> {
    const rows: EnvironmentRow[] = await reader(this.deps.db, ctx).query(
      `SELECT ${ENVIRONMENT_COLUMNS} FROM feature_flag_environments WHERE id = $1 AND team_id = $2`,
      [id, ctx.actor.teamId],
    );
    if (!rows[0]) throw notFound('environment');
    return toEnvironmentView(rows[0]);
  }

  /** Environments of the team by ID (unknown or foreign IDs are missing from the map). */
  async environmentNames(tx: EntityManager, teamId: string, ids: readonly string[]): Promise<Map<string, string>> {
    const rows: { id: string; name: string }[] = await tx.query(
      `SELECT id, name FROM feature_flag_environments WHERE team_id = $1 AND id = ANY($2::text[])`,
      [teamId, ids],
    );
    return new Map(rows.map((row) => [row.id, row.name]));
  }

  async listFlags(ctx: CallContext, environmentId: string, query: ListPlatformPageQuery): Promise<Page<FlagView>> {
    // The request's fields before the lookup, as on every list (docs/api-choices.md, the order of the common checks).
    const limit = parseLimit(query.limit);
    await this.getEnvironment(ctx, environmentId);
    const scope: ListScope = { teamId: ctx.actor.teamId, list: `feature_flags:${environmentId}`, filters: {} };
    const after = decodeCursor(scope, query.cursor);
    const rows: FlagRow[] = await reader(this.deps.db, ctx).query(
      `SELECT ${FLAG_COLUMNS} FROM feature_flags
        WHERE environment_id = $1 AND ($2::text IS NULL OR key COLLATE "C" > $2) ORDER BY key COLLATE "C" LIMIT $3`,
      [environmentId, after, limit + 1],
    );
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    return { data: page.map(toFlagView), nextCursor: more ? encodeCursor(scope, page[page.length - 1]!.key) : null };
  }

  async getFlag(ctx: CallContext, environmentId: string, key: string): Promise<FlagView> {
    checkKey(key);
    await this.getEnvironment(ctx, environmentId);
    const rows: FlagRow[] = await reader(this.deps.db, ctx).query(
      `SELECT ${FLAG_COLUMNS} FROM feature_flags WHERE environment_id = $1 AND key = $2`,
      [environmentId, key],
    );
    if (!rows[0]) throw notFound('flag');
    return toFlagView(rows[0]);
  }

  /**
   * Creates the flag (no If-Match) or replaces it (If-Match required: 428 without, 412 when stale). A PUT that
   * changes nothing commits nothing: same version, no revision, no event.
   */
  async putFlag(
    ctx: CallContext,
    environmentId: string,
    key: string,
    ifMatch: string,
    input: PutFlagInput,
  ): Promise<{ flag: FlagView; created: boolean }> {
    checkKey(key);
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const existing = await this.lockForChange(tx, ctx, environmentId, key);
      const value = input.value === null ? 'null' : input.value.minified;
      const now = this.deps.clock.now();
      if (existing) {
        if (!ifMatch)
          throw new ServiceError(
            'precondition_required',
            `If-Match is required to change an existing flag: send the ETag from GET /feature_flags/environments/${environmentId}/flags/${key}`,
          );
        const current = toFlagView(existing);
        assertCurrent(ifMatch, current.etag);
        const changed = [
          ...(existing.enabled !== input.enabled ? ['enabled'] : []),
          ...(existing.value !== value ? ['value'] : []),
          ...(existing.description !== input.description ? ['description'] : []),
        ];
        if (changed.length === 0) return { flag: current, created: false };
        const rows = await queryRows<FlagRow>(
          tx,
          `WITH revised AS (${raiseRevision('$7')})
           UPDATE feature_flags f SET enabled = $3, description = $4, value = $5, version = f.version + 1,
                  revision = revised.revision, updated_by = $6, updated_at = $7
             FROM revised WHERE f.environment_id = $1 AND f.key = $2 RETURNING ${prefixed('f')}`,
          [environmentId, key, input.enabled, input.description, value, ctx.actor.keyId, now],
        );
        const flag = toFlagView(rows[0]!);
        await this.writeEvent(tx, ctx, flag, 'updated', changed);
        return { flag, created: false };
      }
      if (ifMatch) throw new ServiceError('revision_conflict', 'the flag does not exist (omit If-Match to create it)');
      // The count is read by the insert: a statement that starts after lockForChange holds the environment's row,
      // so it sees every flag a racing create committed while this one waited (the locking statement's snapshot was
      // taken before the wait). No row: the environment is full, and the transaction (its revision) rolls back.
      const rows: FlagRow[] = await tx.query(
        `WITH revised AS (${raiseRevision('$7')})
         INSERT INTO feature_flags (environment_id, key, team_id, enabled, description, value, version, revision,
           created_by, updated_by, created_at, updated_at)
         SELECT $1, $2, $8, $3, $4, $5, 1, revised.revision, $6, $6, $7, $7 FROM revised
          WHERE (SELECT count(*) FROM feature_flags WHERE environment_id = $1) < $9
         RETURNING ${FLAG_COLUMNS}`,
        [
          environmentId,
          key,
          input.enabled,
          input.description,
          value,
          ctx.actor.keyId,
          now,
          ctx.actor.teamId,
          MAX_FLAGS_PER_ENVIRONMENT,
        ],
      );
      if (!rows[0])
        throw new ServiceError('quota_exceeded', `an environment has at most ${MAX_FLAGS_PER_ENVIRONMENT} flags`);
      const flag = toFlagView(rows[0]!);
      await this.writeEvent(tx, ctx, flag, 'created', ['enabled', 'value', 'description']);
      return { flag, created: true };
    });
  }

  async deleteFlag(ctx: CallContext, environmentId: string, key: string, ifMatch: string): Promise<DeletedFlagView> {
    checkKey(key);
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const existing = await this.lockForChange(tx, ctx, environmentId, key);
      if (!existing) throw notFound('flag');
      const current = toFlagView(existing);
      assertCurrent(ifMatch, current.etag);
      const rows = await queryRows<{ revision: string }>(
        tx,
        `WITH revised AS (${raiseRevision('$3')})
         DELETE FROM feature_flags f USING revised WHERE f.environment_id = $1 AND f.key = $2
         RETURNING revised.revision`,
        [environmentId, key, this.deps.clock.now()],
      );
      const revision = String(rows[0]!.revision);
      const version = String(Number(current.version) + 1);
      await this.writeEvent(tx, ctx, { ...current, version, revision }, 'deleted', []);
      return { environmentId, key, deleted: true, revision };
    });
  }

  /**
   * One statement: locks the environment (its lock serialises every change of its flags, so the revision orders
   * them and the flag rows need no lock of their own), checks the key may administer it, and reads the flag. Not the
   * environment's flag count: this statement's snapshot predates its wait for the lock (the create's insert counts).
   */
  private async lockForChange(
    tx: EntityManager,
    ctx: CallContext,
    environmentId: string,
    key: string,
  ): Promise<FlagRow | null> {
    const rows: (FlagRow & { environment_found: string })[] = await tx.query(
      `SELECT e.id AS environment_found, ${prefixed('f')}
         FROM feature_flag_environments e
         LEFT JOIN feature_flags f ON f.environment_id = e.id AND f.key = $2
        WHERE e.id = $1 AND e.team_id = $3
          FOR NO KEY UPDATE OF e`,
      [environmentId, key, ctx.actor.teamId],
    );
    const row = rows[0];
    if (!row) throw notFound('environment');
    assertAdministers(ctx.actor, [environmentId]);
    return row.key === null ? null : row;
  }

  private async writeEvent(
    tx: EntityManager,
    ctx: CallContext,
    flag: Pick<FlagView, 'environmentId' | 'key' | 'version' | 'revision'>,
    change: FlagChange,
    changedFields: string[],
  ): Promise<void> {
    await this.deps.events.write(tx, {
      teamId: ctx.actor.teamId,
      type: FLAG_UPDATED,
      environmentId: flag.environmentId,
      revision: flag.revision,
      data: {
        flag_key: flag.key,
        change,
        changed_fields: changedFields,
        flag_version: flag.version,
        actor_key_id: ctx.actor.keyId,
      },
    });
  }
}

function checkKey(key: string): void {
  if (!FLAG_KEY.test(key))
    throw new ServiceError('invalid_field', 'flag_key must be 1 to 128 letters, digits, _, . or -', {
      field: 'flag_key',
    });
}
