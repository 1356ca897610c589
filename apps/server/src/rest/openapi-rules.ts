import {
  FILTER_OPERATORS,
  JSON_POINTER_PATTERN,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LIST_LENGTH,
  MAX_TRANSFORM_FIELDS,
  MAX_TRANSFORM_NAME_BYTES,
} from '@svc/json';

/**
 * The shapes of an endpoint's filter and transform for the API description (docs/api-choices.md, "Filters" and
 * "Transforms"). The service reads both as JSON text and checks them with @svc/json's compilers, whose constants
 * these are made from; what a JSON Schema cannot say is in the descriptions. Fields that hold one declare
 * `.meta({ rule: 'Filter' })` (or 'Transform'); the OpenAPI document refers to these components there.
 */
const pointer = { type: 'string', pattern: JSON_POINTER_PATTERN.source, description: 'An RFC 6901 JSON Pointer' };
const group = (key: 'all' | 'any') => ({
  type: 'object',
  additionalProperties: false,
  required: [key],
  properties: {
    [key]: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_FILTER_LIST_LENGTH,
      items: { $ref: '#/components/schemas/Filter' },
    },
  },
});
const valueWhen = (ops: readonly string[], value: Record<string, unknown>) => ({
  if: { properties: { op: { enum: ops } } },
  then: { properties: { value } },
});

export const RULE_COMPONENTS: Record<string, Record<string, unknown>> = {
  Filter: {
    description:
      `A condition, or a group of exactly one key: all or any (1 to ${MAX_FILTER_LIST_LENGTH} filters) or not (one ` +
      `filter). Groups nest at most ${MAX_FILTER_DEPTH} levels; a filter holds at most ${MAX_FILTER_CONDITIONS} ` +
      'conditions in all. Kept as written (exact decimals).',
    oneOf: [
      { $ref: '#/components/schemas/FilterCondition' },
      group('all'),
      group('any'),
      {
        type: 'object',
        additionalProperties: false,
        required: ['not'],
        properties: { not: { $ref: '#/components/schemas/Filter' } },
      },
    ],
  },
  FilterCondition: {
    type: 'object',
    additionalProperties: false,
    required: ['path', 'op', 'value'],
    properties: { path: pointer, op: { enum: [...FILTER_OPERATORS] }, value: {} },
    allOf: [
      valueWhen(['in'], { type: 'array', minItems: 1, maxItems: MAX_FILTER_LIST_LENGTH }),
      valueWhen(['exists'], { type: 'boolean' }),
      valueWhen(['gt', 'gte', 'lt', 'lte'], { type: ['number', 'string'] }),
      valueWhen(['prefix'], { type: 'string' }),
    ],
  },
  Transform: {
    description:
      'The new body: a JSON object with one member per field, copied from the payload (from, a JSON Pointer; ' +
      'required fails the transform when it is missing) or written as a literal (value). Names are unique.',
    type: 'object',
    additionalProperties: false,
    required: ['fields'],
    properties: {
      fields: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_TRANSFORM_FIELDS,
        items: {
          oneOf: [
            {
              type: 'object',
              additionalProperties: false,
              required: ['name', 'from'],
              properties: {
                name: { type: 'string', minLength: 1, maxLength: MAX_TRANSFORM_NAME_BYTES },
                from: pointer,
                required: { type: 'boolean' },
              },
            },
            {
              type: 'object',
              additionalProperties: false,
              required: ['name', 'value'],
              properties: { name: { type: 'string', minLength: 1, maxLength: MAX_TRANSFORM_NAME_BYTES }, value: {} },
            },
          ],
        },
      },
    },
  },
};

/** zod's JSON Schema of a field declared `.meta({ rule })` becomes a reference to the rule's component. */
export function referToRule(ctx: { jsonSchema: Record<string, unknown> }): void {
  const rule = ctx.jsonSchema['rule'];
  if (typeof rule !== 'string') return;
  for (const key of Object.keys(ctx.jsonSchema)) if (key !== 'description') delete ctx.jsonSchema[key];
  ctx.jsonSchema['$ref'] = `#/components/schemas/${rule}`;
}
