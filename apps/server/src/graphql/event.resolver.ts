import { Arg, Authorized, Ctx, ID, Int, Query, Resolver } from 'type-graphql';
import { ListOperationalEventsQuery, parseInput, type OperationalEventView } from '@svc/core';
import { callContext, type GraphqlContext } from './context.js';
import { ListOrder } from './enums.js';
import { defined } from './mappers.js';
import { OperationalEvent, OperationalEventConnection } from './event.types.js';

export function toOperationalEvent(view: OperationalEventView): OperationalEvent {
  return {
    id: view.id,
    type: view.type,
    createdAt: view.createdAt,
    resourceId: view.resourceId,
    tenantId: view.tenantId,
    resourceVersion: view.resourceVersion,
    data: view.data,
    coalesced: view.coalesced,
    count: view.count,
    firstId: view.firstId,
    lastId: view.lastId,
  };
}

@Resolver(() => OperationalEvent)
export class OperationalEventResolver {
  @Authorized()
  @Query(() => OperationalEventConnection, {
    description:
      'Operational events of the last 30 days in commit order (GET /events), or the other way with order newest ' +
      '(then nextCursor is null on the last page)',
  })
  async events(
    @Ctx() context: GraphqlContext,
    @Arg('type', () => String, { nullable: true }) type?: string,
    @Arg('resourceId', () => String, { nullable: true, description: 'Also the first or last of a coalesced event' })
    resourceId?: string,
    @Arg('tenantId', () => ID, { nullable: true }) tenantId?: string,
    @Arg('order', () => ListOrder, { nullable: true, description: 'oldest (default) or newest first' }) order?: string,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<OperationalEventConnection> {
    const page = await context.services.events.listEvents(
      callContext(context),
      parseInput(
        ListOperationalEventsQuery,
        defined({
          type: type ?? undefined,
          resource_id: resourceId ?? undefined,
          tenant_id: tenantId ?? undefined,
          order: order ?? undefined,
          limit: first ?? undefined,
          cursor: after ?? undefined,
        }),
      ),
    );
    return { nodes: page.data.map(toOperationalEvent), nextCursor: page.nextCursor };
  }
}
