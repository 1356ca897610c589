import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, openDataSource, type DataSource } from '@svc/db';
import { ENTITIES } from './entities.js';

let db: DataSource;
let drop: () => Promise<void>;
beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  db = await openDataSource(database.url, ENTITIES, 2);
});
afterAll(async () => {
  await db.destroy();
  await drop();
});

interface ColumnRow {
  table_name: string;
  column_name: string;
  data_type: string;
  is_nullable: 'YES' | 'NO';
}

const TYPE_ALIASES: Record<string, string> = {
  text: 'text',
  boolean: 'boolean',
  bigint: 'bigint',
  integer: 'integer',
  jsonb: 'jsonb',
  bytea: 'bytea',
  timestamptz: 'timestamp with time zone',
  date: 'date',
};

describe('TypeORM entities and the SQL schema', () => {
  it('map every column of every mapped table with the same type and nullability, and nothing else', async () => {
    const rows: ColumnRow[] = await db.query(
      `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    for (const metadata of db.entityMetadatas) {
      const tableColumns = rows.filter((r) => r.table_name === metadata.tableName);
      expect(tableColumns.length, `table ${metadata.tableName} exists`).toBeGreaterThan(0);
      const mapped = metadata.columns.map((column) => ({
        name: column.databaseName,
        type: column.isArray ? 'ARRAY' : (TYPE_ALIASES[String(column.type)] ?? `unknown:${String(column.type)}`),
        nullable: column.isNullable,
      }));
      const actual = tableColumns.map((r) => ({
        name: r.column_name,
        type: r.data_type,
        nullable: r.is_nullable === 'YES',
      }));
      const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
      expect(mapped.sort(byName), `entity ${metadata.name} matches table ${metadata.tableName}`).toEqual(
        actual.sort(byName),
      );
    }
  });
});
