import type { DataSource, EntityManager } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { assertCurrent, etagFor } from '../common/etag.js';
import { ServiceError, notFound } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, parseLimit, toPage, type ListScope, type Page } from '../common/paging.js';
import { inTransaction, lockOwned, lockTeam, reader } from '../common/transaction.js';
import type { Limits } from '../catalog/limits.js';
import { EventTypeEntity } from './event-type.entity.js';
import type { CreateEventTypeInput, ListEventTypesQuery, UpdateEventTypeInput } from './event-type.inputs.js';
import { toEventTypeView, type EventTypeView } from './event-type.view.js';

export class EventTypeService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
    private readonly limits: Limits,
  ) {}

  etag(eventType: { id: string; version: string }): string {
    return etagFor(eventType.id, eventType.version);
  }

  /** Inputs arrive parsed by the transport with the shared schemas (event-type.inputs.ts). */
  async createEventType(ctx: CallContext, input: CreateEventTypeInput): Promise<EventTypeView> {
    return inTransaction(this.db, ctx, async (tx) => {
      await lockTeam(tx, ctx.actor.teamId);
      const repo = tx.getRepository(EventTypeEntity);
      const existing = await repo.findOneBy({ teamId: ctx.actor.teamId, name: input.name });
      if (existing)
        throw new ServiceError('resource_in_use', 'an event type with this name exists (archived ones included)', {
          field: 'name',
          resourceId: existing.id,
        });
      if ((await repo.countBy({ teamId: ctx.actor.teamId })) >= this.limits.max_event_types.value)
        throw new ServiceError(
          'quota_exceeded',
          `the team has reached its limit of ${this.limits.max_event_types.value} event types`,
        );
      const now = this.clock.now();
      const eventType = repo.create({
        id: newId('eventType', this.clock),
        teamId: ctx.actor.teamId,
        name: input.name,
        description: input.description,
        example: input.example?.text ?? null,
        archived: false,
        version: '1',
        createdAt: now,
        updatedAt: now,
      });
      await repo.insert(eventType);
      return toEventTypeView(eventType);
    });
  }

  async getEventType(ctx: CallContext, id: string): Promise<EventTypeView> {
    const found = await reader(this.db, ctx).getRepository(EventTypeEntity).findOneBy({ id, teamId: ctx.actor.teamId });
    if (!found) throw notFound('event type');
    return toEventTypeView(found);
  }

  async listEventTypes(ctx: CallContext, query: ListEventTypesQuery): Promise<Page<EventTypeView>> {
    const limit = parseLimit(query.limit);
    const scope: ListScope = { teamId: ctx.actor.teamId, list: 'event_types', filters: { name: query.name ?? null } };
    const after = decodeCursor(scope, query.cursor);
    const qb = reader(this.db, ctx)
      .getRepository(EventTypeEntity)
      .createQueryBuilder('e')
      .where('e.team_id = :teamId', { teamId: ctx.actor.teamId })
      .orderBy('e.id', 'ASC')
      .limit(limit + 1);
    if (query.name !== undefined) qb.andWhere('e.name = :name', { name: query.name });
    if (after) qb.andWhere('e.id > :after', { after });
    return toPage(scope, await qb.getMany(), limit, toEventTypeView);
  }

  async updateEventType(
    ctx: CallContext,
    id: string,
    ifMatch: string,
    input: UpdateEventTypeInput,
  ): Promise<EventTypeView> {
    return inTransaction(this.db, ctx, async (tx) => {
      const eventType = await lockOwned(tx, EventTypeEntity, ctx.actor.teamId, id, 'event type');
      assertCurrent(ifMatch, this.etag(eventType));
      const next = {
        description: input.description ?? eventType.description,
        example: input.example === undefined ? eventType.example : (input.example?.text ?? null),
        archived: input.archived === false ? false : eventType.archived,
      };
      if (
        next.description === eventType.description &&
        next.example === eventType.example &&
        next.archived === eventType.archived
      )
        return toEventTypeView(eventType);
      return this.saveChange(tx, eventType, next);
    });
  }

  /** DELETE archives: new messages of the type are refused; archiving an archived type changes nothing. */
  async archiveEventType(ctx: CallContext, id: string, ifMatch: string): Promise<EventTypeView> {
    return inTransaction(this.db, ctx, async (tx) => {
      const eventType = await lockOwned(tx, EventTypeEntity, ctx.actor.teamId, id, 'event type');
      assertCurrent(ifMatch, this.etag(eventType));
      if (eventType.archived) return toEventTypeView(eventType);
      return this.saveChange(tx, eventType, { archived: true });
    });
  }

  /** For admission: the type must exist in the catalog and be active, else 422 invalid_event_type. */
  async requireActiveEventType(ctx: CallContext, name: string, field = 'event_type'): Promise<EventTypeEntity> {
    const found = await reader(this.db, ctx)
      .getRepository(EventTypeEntity)
      .findOneBy({ teamId: ctx.actor.teamId, name });
    if (!found || found.archived)
      throw new ServiceError('invalid_event_type', 'event type is not active in the catalog', { field });
    return found;
  }

  /** An explicit UPDATE of the locked row (save() would read it again first); the version moves by one. */
  private async saveChange(
    tx: EntityManager,
    eventType: EventTypeEntity,
    change: Pick<Partial<EventTypeEntity>, 'description' | 'example' | 'archived'>,
  ): Promise<EventTypeView> {
    const update = { ...change, version: (BigInt(eventType.version) + 1n).toString(), updatedAt: this.clock.now() };
    await tx.getRepository(EventTypeEntity).update({ id: eventType.id }, update);
    return toEventTypeView(Object.assign(eventType, update));
  }
}
