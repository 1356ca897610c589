import { randomFillSync } from 'node:crypto';

/** Random bytes for the next 256 Request-Ids: one call into the CSPRNG per 256 answers instead of one per answer. */
const ID_BYTES = 12;
const pool = Buffer.alloc(ID_BYTES * 256);
let next = pool.length;

/**
 * The Request-Id of an answer: `req_` and 16 base64url characters, 96 random bits. Drawn from a pool refilled from
 * the CSPRNG (randomBytes per request was 2% of the server's CPU at 1,000 publishes a second, docs/benchmarks.md).
 */
export function newRequestId(): string {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const id = pool.toString('base64url', next, next + ID_BYTES);
  next += ID_BYTES;
  return `req_${id}`;
}
