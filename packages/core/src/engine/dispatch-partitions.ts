import { createHash } from 'node:crypto';

/**
 * Endpoints are spread over this many partitions; a worker owns whole partitions (dispatch_partitions). Fixed,
 * because svc_dispatch_partition() in prisma-free-schema/0015_delivery_queue.sql is the same function.
 */
export const DISPATCH_PARTITIONS = 32;

/** The partition of an endpoint: the first 32 bits of md5(id), as in svc_dispatch_partition(). */
export function partitionOf(endpointId: string): number {
  return createHash('md5').update(endpointId).digest().readUInt32BE(0) % DISPATCH_PARTITIONS;
}
