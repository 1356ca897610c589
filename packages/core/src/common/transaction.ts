import type { DataSource, EntityManager } from 'typeorm';
import type { CallContext } from './context.js';

/** Runs in the caller's transaction when there is one, else in a new one. */
export function inTransaction<T>(
  db: DataSource,
  ctx: CallContext,
  work: (tx: EntityManager) => Promise<T>,
): Promise<T> {
  return ctx.tx ? work(ctx.tx) : db.transaction(work);
}

/** A manager for reads: the caller's transaction when there is one. */
export function reader(db: DataSource, ctx: CallContext): EntityManager {
  return ctx.tx ?? db.manager;
}
