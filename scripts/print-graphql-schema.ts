import { printSchema } from 'graphql';
import { buildGraphqlSchema } from '../apps/server/src/graphql/schema.js';
console.log(printSchema(await buildGraphqlSchema()));
