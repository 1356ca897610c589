import type { HotStatement } from './hot-sql.js';

/**
 * One statement of a transaction sent in one message: SQL text (a single statement, its values written in as
 * literals with `sqlLiteral`), or a prepared statement with its values.
 */
export type RoundTripPart = string | { statement: HotStatement; values: readonly unknown[]; types?: string };

/** The part of a pooled node-postgres client this needs. */
export interface RoundTripClient {
  query(text: string): Promise<{ rows: unknown[] }[] | { rows: unknown[] }>;
  escapeLiteral(value: string): string;
  release(destroy?: boolean | Error): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Errors a checked-out client emits itself (its connection ended: a Postgres restart, a terminated backend) are
 * answered by the query that was running; this listener only keeps them from being unhandled. node-postgres emits
 * "Connection terminated unexpectedly" on the client from the socket's end, which Node delivers (process.nextTick)
 * before an awaited query's rejection reaches the code that releases the client: without a listener of its own, a
 * worker process died of it when Postgres restarted (postgres-restart.test.ts).
 */
const ignoreClientError = (): void => undefined;

/** The statements each pooled connection has prepared for this (a connection that fails is destroyed). */
const preparedOn = new WeakMap<RoundTripClient, Set<string>>();

/**
 * Runs `parts` as one transaction in one round trip: BEGIN, each part, COMMIT, sent as one simple-protocol message.
 * node-postgres sends a parameterised statement and waits for its answer before the next, so a transaction of two
 * statements costs four round trips that way (BEGIN, each statement, COMMIT); here it costs one, and each statement
 * still sees what the ones before it wrote (its own snapshot, after theirs). A prepared statement is prepared once
 * per connection with PREPARE, under its own name with a prefix (names made by the extended protocol share the
 * namespace), and run with EXECUTE; its values become literals escaped by the driver. The same statement text is
 * planned the same way as through `HotSql.query` on a connection with the same settings.
 *
 * Answers each part's rows, in order. Takes `client` from its pool and gives it back: destroyed when anything failed,
 * since the transaction may be left open on it. Nothing is written when it throws.
 */
export async function transactionInOneRoundTrip(
  client: RoundTripClient,
  parts: readonly RoundTripPart[],
): Promise<unknown[][]> {
  client.on('error', ignoreClientError);
  try {
    let prepared = preparedOn.get(client);
    if (!prepared) preparedOn.set(client, (prepared = new Set()));
    const literal = (value: unknown) => sqlLiteral(client, value);
    const statements = ['BEGIN'];
    for (const part of parts) {
      if (typeof part === 'string') {
        statements.push(part);
        continue;
      }
      const name = `rt_${part.statement.name}`;
      if (!prepared.has(name)) {
        // Outside the transaction, once per connection: a PREPARE stays whatever the transaction does.
        await client.query(`PREPARE ${name}${part.types ? ` (${part.types})` : ''} AS ${part.statement.text}`);
        prepared.add(name);
      }
      statements.push(`EXECUTE ${name}(${part.values.map(literal).join(', ')})`);
    }
    statements.push('COMMIT');
    const results = await client.query(statements.join(';\n'));
    const rows = (Array.isArray(results) ? results : [results]).map((result) => result.rows);
    if (rows.length !== statements.length)
      throw new Error(`a part of the transaction was more than one statement (${rows.length} results)`);
    client.release();
    return rows.slice(1, -1);
  } catch (error) {
    client.release(true);
    throw error;
  } finally {
    // After the release, which gives the client the pool's own listener again.
    client.removeListener('error', ignoreClientError);
  }
}

/**
 * A value as an SQL literal (for EXECUTE, whose parameters have the prepared statement's types): text escaped by the
 * driver, arrays as array literals, bytes as hex, times as ISO 8601, other objects as JSON.
 */
export function sqlLiteral(client: Pick<RoundTripClient, 'escapeLiteral'>, value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' || typeof value === 'bigint') {
    if (!Number.isFinite(Number(value))) throw new Error(`not a finite number: ${String(value)}`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return client.escapeLiteral(textOf(value, false));
}

/** The text form of a value; inside an array literal, elements are quoted and NULL is bare. */
function textOf(value: unknown, element: boolean): string {
  if (value === null || value === undefined) return 'NULL';
  if (Array.isArray(value)) return `{${value.map((v) => textOf(v, true)).join(',')}}`;
  let text: string;
  if (value instanceof Date) text = value.toISOString();
  else if (Buffer.isBuffer(value)) text = `\\x${value.toString('hex')}`;
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value as string | number | boolean | bigint);
  return element ? `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"` : text;
}
