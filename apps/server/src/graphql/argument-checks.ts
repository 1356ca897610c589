import { getNamedType, isNonNullType, type GraphQLArgument, type GraphQLSchema } from 'graphql';
import { isWellFormedId, notFound, ServiceError, unstorableTextProblem } from '@svc/core';

/** `tenantId` -> `tenant_id`: errors name fields as REST does. */
function restName(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** The first string in an argument's value (at any depth) that no resource can hold, with its problem. */
function firstUnstorableText(value: unknown): string | null {
  if (typeof value === 'string') return unstorableTextProblem(value);
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = firstUnstorableText(item);
      if (problem) return problem;
    }
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    const problem = unstorableTextProblem(key) ?? firstUnstorableText(item);
    if (problem) return problem;
  }
  return null;
}

/**
 * Required ID arguments that the REST form takes in its body: an unknown one is 422 invalid_field there and here, so
 * a malformed one is too. Every other required ID names the resource the field acts on (a REST path) and answers
 * not_found like an unknown one; an optional ID is a filter, invalid_field as a REST query parameter.
 */
const BODY_IDS = new Set(['replayEstimate.endpointId']);

function checkArgument(fieldName: string, argument: GraphQLArgument, value: unknown): void {
  if (value === undefined || value === null) return;
  const named = getNamedType(argument.type);
  if (named.name === 'ID' && typeof value === 'string' && !isWellFormedId(value)) {
    if (isNonNullType(argument.type) && !BODY_IDS.has(`${fieldName}.${argument.name}`)) throw notFound('resource');
    throw new ServiceError('invalid_field', `${restName(argument.name)} must be an ID`, {
      field: restName(argument.name),
    });
  }
  if (typeof value === 'object' && !Array.isArray(value)) {
    // An input object: name the member that holds the text, as the REST body field.
    for (const [member, item] of Object.entries(value as Record<string, unknown>)) {
      const problem = unstorableTextProblem(member) ?? firstUnstorableText(item);
      if (problem)
        throw new ServiceError('invalid_field', `${restName(member)} ${problem}`, { field: restName(member) });
    }
    return;
  }
  const problem = firstUnstorableText(value);
  if (problem)
    throw new ServiceError('invalid_field', `${restName(argument.name)} ${problem}`, {
      field: restName(argument.name),
    });
}

/**
 * Checks the arguments of every root field before its resolver runs: IDs by their shape, text without NUL or lone
 * surrogates (docs/api-choices.md, "Hostile input"), so nothing malformed reaches a service or Postgres. Root fields
 * only, and synchronously: a middleware on every field would add a promise hop to each one and split the batches of
 * the nested lists' loaders (whose arguments are page sizes and cursors, checked by their own rules).
 */
export function checkRootArguments(schema: GraphQLSchema): GraphQLSchema {
  for (const type of [schema.getQueryType(), schema.getMutationType()]) {
    for (const field of Object.values(type?.getFields() ?? {})) {
      const resolve = field.resolve;
      if (!resolve || field.args.length === 0) continue;
      field.resolve = (source, args: Record<string, unknown>, context, info) => {
        for (const argument of field.args) checkArgument(field.name, argument, args[argument.name]);
        return resolve(source, args, context, info);
      };
    }
  }
  return schema;
}
