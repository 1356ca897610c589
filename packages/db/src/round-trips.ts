import pg from 'pg';

/**
 * Counts Postgres round trips made by this process: every query a node-postgres client sends (BEGIN and COMMIT
 * included), whichever pool it comes from. For tests and the benchmark; installing it costs one counter bump
 * per query.
 */
export interface RoundTripCounter {
  readonly count: number;
  reset(): void;
}

let total = 0;
let installed = false;

export function countRoundTrips(): RoundTripCounter {
  if (!installed) {
    installed = true;
    const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const original = prototype.query;
    prototype.query = function countedQuery(this: unknown, ...args: unknown[]) {
      total += 1;
      return original.apply(this, args);
    };
  }
  let start = total;
  return {
    get count() {
      return total - start;
    },
    reset() {
      start = total;
    },
  };
}
