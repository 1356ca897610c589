/** Prints the GraphQL schema (SDL); `npm run graphql:schema` refreshes docs/schema.graphql, which a test keeps current. */
import { printSchema } from 'graphql';
import { buildGraphqlSchema } from '../apps/server/src/graphql/schema.js';

console.log(printSchema(await buildGraphqlSchema()));
