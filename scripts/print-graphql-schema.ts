/**
 * Prints the GraphQL schema (SDL), sorted by name; `npm run graphql:schema` refreshes docs/schema.graphql, which a
 * test keeps current. Sorted because type-graphql's argument order is not stable across schema builds in one process
 * (a field resolver's arguments came out in source order or reversed), and a document should not depend on it.
 */
import { lexicographicSortSchema, printSchema } from 'graphql';
import { buildGraphqlSchema } from '../apps/server/src/graphql/schema.js';

console.log(printSchema(lexicographicSortSchema(await buildGraphqlSchema())));
