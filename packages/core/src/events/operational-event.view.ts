import type { EventDataValue, OperationalEventType } from './operational-event.types.js';

/** What reads show of an operational event; transports render it. */
export interface OperationalEventView {
  id: string;
  type: OperationalEventType;
  /** The first occurrence. */
  createdAt: Date;
  /** The resource of the first occurrence (equal to firstId). */
  resourceId: string;
  tenantId: string;
  resourceVersion: string;
  /** The first occurrence's data. */
  data: Record<string, EventDataValue>;
  coalesced: boolean;
  count: number;
  /** Resource IDs of the first and the last occurrence folded into the event. */
  firstId: string;
  lastId: string;
}

export interface OperationalEventRow {
  id: string;
  type: OperationalEventType;
  created_at: Date;
  resource_id: string;
  tenant_id: string;
  resource_version: string;
  data: Record<string, EventDataValue>;
  coalesced: boolean;
  count: number;
  first_id: string;
  last_id: string;
}

export function toOperationalEventView(row: OperationalEventRow): OperationalEventView {
  return {
    id: row.id,
    type: row.type,
    createdAt: row.created_at,
    resourceId: row.resource_id,
    tenantId: row.tenant_id,
    resourceVersion: row.resource_version,
    data: row.data,
    coalesced: row.coalesced,
    count: row.count,
    firstId: row.first_id,
    lastId: row.last_id,
  };
}
