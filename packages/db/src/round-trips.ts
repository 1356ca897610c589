import pg from 'pg';

/**
 * Counts Postgres round trips made by this process: every query a node-postgres client sends (BEGIN and COMMIT
 * included), whichever pool it comes from. For tests and the benchmark; installing it costs one counter bump
 * per query (and a pattern test per query while a counter with `ignoring` is open).
 */
export interface RoundTripCounter {
  readonly count: number;
  reset(): void;
  /** Stops testing statements against `ignoring` (the count stays as it is). */
  close(): void;
}

export interface RoundTripOptions {
  /**
   * Statements not counted: per-request overhead that real time decides, such as a key lookup once its cache entry
   * has expired or a rate-token chunk, where a test counts what one operation costs apart from it.
   */
  ignoring?: RegExp;
}

let total = 0;
let installed = false;
const filtered = new Set<{ ignoring: RegExp; ignored: number }>();

function statementText(args: unknown[]): string {
  const first = args[0];
  if (typeof first === 'string') return first;
  if (first && typeof first === 'object' && typeof (first as { text?: unknown }).text === 'string')
    return (first as { text: string }).text;
  return '';
}

export function countRoundTrips(options: RoundTripOptions = {}): RoundTripCounter {
  if (!installed) {
    installed = true;
    const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const original = prototype.query;
    prototype.query = function countedQuery(this: unknown, ...args: unknown[]) {
      total += 1;
      if (filtered.size > 0) {
        const text = statementText(args);
        for (const filter of filtered) if (filter.ignoring.test(text)) filter.ignored += 1;
      }
      return original.apply(this, args);
    };
  }
  let start = total;
  const filter = options.ignoring ? { ignoring: options.ignoring, ignored: 0 } : undefined;
  if (filter) filtered.add(filter);
  return {
    get count() {
      return total - start - (filter?.ignored ?? 0);
    },
    reset() {
      start = total;
      if (filter) filter.ignored = 0;
    },
    close() {
      if (filter) filtered.delete(filter);
    },
  };
}
