import { SHOWN_ATTEMPT_COUNT_SQL, shownStatusSql } from './delivery-status.js';
import { repairedBySql } from './repairs.js';

/**
 * A delivery as the API shows it, from DELIVERY_FROM: `in_flight` while an attempt holds its queue row (the lease
 * is the record of an attempt in flight, and its number the attempt count), `scheduled` for a queued delivery not
 * yet due that no attempt has touched ($1 is now); a dead letter's repair (repairs.ts).
 */
export const DELIVERY_COLUMNS = `
  d.id, d.message_id, d.endpoint_id, d.tenant_id, d.event_type, d.generation, d.replay_of, d.replay_id,
  ${shownStatusSql('$1')} AS status,
  ${SHOWN_ATTEMPT_COUNT_SQL} AS attempt_count, d.next_attempt_at, d.next_trigger, d.expires_at, d.body_bytes, d.content_type,
  d.body IS NOT NULL OR d.body_bytes <> (SELECT body_bytes FROM messages WHERE id = d.message_id) AS transformed,
  d.delivery_units, d.last_status_code, d.last_error, d.last_attempt_at, d.created_at, d.updated_at, d.finished_at,
  ${repairedBySql('d')} AS repaired_by, d.sequence`;
