import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HotStatement } from './hot-sql.js';
import { transactionInOneRoundTrip } from './one-round-trip.js';
import { createTestDatabase } from './test-database.js';

let database: { url: string; drop(): Promise<void> };
let pool: pg.Pool;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  await pool.query(`CREATE TABLE rt_values (id text PRIMARY KEY, tags text, body bytea, doc jsonb, at timestamptz,
                                             n bigint, flag boolean)`);
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

// Plain statements, not hotStatement(): that registers them with every fixed hot statement of the process, which
// warmPool plans, and the test files of a fork share their modules (vitest.config.ts, isolate: false), so a later
// file's warm pools tried to plan these on a database without rt_values (boot-warm.test.ts failed in CI so).
const insert: HotStatement = {
  name: 'rt_test_insert_v1',
  text: `INSERT INTO rt_values (id, tags, body, doc, at, n, flag)
   SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[], $4::jsonb[], $5::timestamptz[], $6::bigint[], $7::bool[])
          AS u(id, tags, body, doc, at, n, flag)
   RETURNING id`,
};
const count: HotStatement = {
  name: 'rt_test_count_v1',
  text: `SELECT count(*)::int AS n FROM rt_values WHERE id = ANY ($1::text[])`,
};

describe('a transaction in one round trip', () => {
  it('passes every kind of value exactly, and a later statement sees what an earlier one wrote', async () => {
    const id = `it's "quoted" \\ and {braced}, NULL`;
    const at = new Date('2026-11-29T05:00:00.123Z');
    const body = Buffer.from([0, 1, 0xfe, 0xff, 0x5c, 0x22]);
    const doc = JSON.stringify({ text: 'a "b" \\ c', list: [1, null] });
    const rows = await transactionInOneRoundTrip(await pool.connect(), [
      {
        statement: insert,
        values: [
          [id, 'plain'],
          ['{x}', null],
          [body, null],
          [doc, null],
          [at, null],
          ['9007199254740993', 1],
          [true, false],
        ],
      },
      { statement: count, values: [[id, 'plain']] },
      `SELECT 1 AS one`,
    ]);
    expect(rows[0]).toEqual([{ id }, { id: 'plain' }]);
    expect(rows[1]).toEqual([{ n: 2 }]);
    expect(rows[2]).toEqual([{ one: 1 }]);
    const stored = await pool.query(`SELECT * FROM rt_values WHERE id = $1`, [id]);
    expect(stored.rows[0]).toMatchObject({
      id,
      tags: '{x}',
      body,
      doc: JSON.parse(doc),
      at,
      n: '9007199254740993',
      flag: true,
    });
    // A missing array element is NULL.
    const plain = await pool.query(`SELECT tags, body, doc FROM rt_values WHERE id = 'plain'`);
    expect(plain.rows[0]).toEqual({ tags: null, body: null, doc: null });
  });

  it('writes nothing when a statement fails, and never returns a connection with an open transaction', async () => {
    const client = await pool.connect();
    await expect(
      transactionInOneRoundTrip(client, [
        { statement: insert, values: [['kept-out'], [null], [null], [null], [null], [1], [false]] },
        `SELECT 1 / 0`,
      ]),
    ).rejects.toThrow(/division by zero/);
    const stored = await pool.query(`SELECT count(*)::int AS n FROM rt_values WHERE id = 'kept-out'`);
    expect(stored.rows[0].n).toBe(0);
    // The pool's next connection runs outside any transaction.
    const next = await pool.connect();
    const state = await next.query(`SELECT now() = statement_timestamp() AS outside`);
    next.release();
    expect(state.rows[0].outside).toBe(true);
  });

  it('notices a part that was more than one statement (its results no longer line up with the parts)', async () => {
    await expect(
      transactionInOneRoundTrip(await pool.connect(), [`INSERT INTO rt_values (id) VALUES ('two'); SELECT 1`]),
    ).rejects.toThrow(/more than one statement/);
    const stored = await pool.query(`SELECT count(*)::int AS n FROM rt_values WHERE id = 'two'`);
    expect(stored.rows[0].n).toBe(1);
  });

  it('rejects when its backend is terminated mid-transaction, and the connection ending is never an unhandled error', async () => {
    const client = await pool.connect();
    const { pid } = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0] as { pid: number };
    const running = transactionInOneRoundTrip(client, [`SELECT pg_sleep(5)`]).then(
      () => null,
      (error: unknown) => error,
    );
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    await admin.end();
    expect(String(await running)).toMatch(/terminat/);
    // The socket's end comes after the error; an unhandled 'error' event then would fail this file.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = await pool.query('SELECT 1 AS one');
    expect(after.rows).toEqual([{ one: 1 }]);
  });
});
