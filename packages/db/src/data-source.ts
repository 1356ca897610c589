import 'reflect-metadata';
import { DataSource, type EntityManager, type MixedList, type EntitySchema } from 'typeorm';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export type EntityList = MixedList<Function | string | EntitySchema>;

export async function openDataSource(databaseUrl: string, entities: EntityList, poolSize = 10): Promise<DataSource> {
  const dataSource = new DataSource({
    type: 'postgres',
    url: databaseUrl,
    entities,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: { max: poolSize },
  });
  await dataSource.initialize();
  return dataSource;
}

export type { DataSource, EntityManager };
