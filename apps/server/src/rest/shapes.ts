import { z } from 'zod';
import { LIST_ORDERS } from '@svc/core';

/**
 * Response shapes are zod schemas: the pipeline checks responses against them in tests and the OpenAPI document is
 * generated from them. A shape with `.meta({ id })` becomes a named component (`#/components/schemas/<id>`);
 * `.describe()` on a field becomes its description.
 */

export const timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)
  .meta({ format: 'date-time' });
export const decimalString = z
  .string()
  .regex(/^\d+$/)
  .describe('A non-negative integer as a decimal string (it may exceed 2^53)');

export const versionField = decimalString.describe(
  'Revision of the resource, a decimal string; it moves by one with every change',
);
export const createdAt = timestamp.describe('When the resource was created (UTC)');
export const updatedAt = timestamp.describe('When the resource last changed (UTC)');
export const metadataField = z
  .record(z.string(), z.string())
  .describe('Your key/value pairs (string values), replaced in full on update');

export const ErrorShape = z
  .strictObject({
    error: z.strictObject({
      code: z.string().describe('Stable error code, e.g. invalid_field, not_found, revision_conflict'),
      message: z.string().describe('A human-readable explanation; may change between versions'),
      field: z.string().optional().describe('The request field or header at fault (a dotted path for nested ones)'),
      resource_id: z.string().optional().describe('The ID of the resource that conflicts with the request'),
    }),
  })
  .meta({ id: 'Error', description: 'Every error response has this shape' });

/** A page of a list; `name` names the component (e.g. TenantList). */
export function listOf<T extends z.ZodType>(item: T, name: string, order = 'oldest first') {
  return z
    .strictObject({
      data: z.array(item).describe(`The items of this page, ${order}`),
      next_cursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page'),
    })
    .meta({ id: name });
}

/** The paging query parameters every list takes (documentation; the list service checks them). */
export const pageQuery = {
  limit: z.int().min(1).max(200).optional().describe('Items per page, 1 to 200 (default 50)'),
  cursor: z.string().optional().describe('The next_cursor of the previous page, with the same filters'),
};

/** The order parameter of the support lists (GET /messages, /deliveries, /events): an extension, oldest by default. */
export const orderQuery = {
  order: z
    .enum(LIST_ORDERS)
    .optional()
    .describe(
      'An extension: oldest (the default) or newest first. A cursor continues only the order it was made in ' +
        '(422 invalid_cursor with the other)',
    ),
};

/**
 * A route's query parameters for the API description, made from the schema its handler validates with, so the
 * document says what is enforced (an ID filter carries its kind's pattern, a text filter its bounds). `limit`,
 * `cursor` and `order` take their documented forms (the list service checks limit and cursor itself); `descriptions`
 * adds the prose.
 */
export function queryOf(validated: z.ZodObject, descriptions: Record<string, string> = {}): z.ZodObject {
  const documented: Record<string, z.ZodType> = { ...pageQuery, ...orderQuery };
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of Object.entries(validated.shape as Record<string, z.ZodType>)) {
    const schema = documented[name] ?? field;
    const description = descriptions[name];
    shape[name] = description === undefined ? schema : schema.describe(description);
  }
  return z.object(shape);
}
