import { ServiceError } from '../common/errors.js';
import type { ListDeliveriesQuery } from './delivery.inputs.js';
import { laterGenerationsSql } from './repairs.js';

/**
 * The extension filters of GET /deliveries that only mean something beside another one (docs/deliveries.md, Lists):
 * a sequence number is an ordered endpoint's, and "latest generation" groups dead letters. 422 invalid_field naming
 * the extension otherwise.
 */
export function checkDeliveryListPairings(query: ListDeliveriesQuery): void {
  if (query.sequence !== undefined && query.endpoint_id === undefined)
    throw new ServiceError('invalid_field', 'sequence numbers are per endpoint: send endpoint_id with sequence', {
      field: 'sequence',
    });
  if (query.latest_generation && query.status !== 'failed' && query.status !== 'expired')
    throw new ServiceError('invalid_field', 'latest_generation groups dead letters: send status failed or expired', {
      field: 'latest_generation',
    });
}

/**
 * `SELECT 1 FROM ...` a later generation of dead letter `d` (same message and endpoint) that is a dead letter too:
 * with `latest_generation`, a failed original and its failed replays are one row, the newest generation.
 */
export function latestGenerationSql(d: string): string {
  return `SELECT 1 FROM ${laterGenerationsSql(d)} AND g.status IN ('failed', 'expired')`;
}
