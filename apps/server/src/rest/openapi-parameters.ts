import { FLAG_KEY, ID_PREFIXES } from '@svc/core';
import { exampleId } from './openapi-examples.js';
import { pathIdKinds } from './path-params.js';

type JsonObject = Record<string, unknown>;

/** What an ID looks like after its prefix: 26 lowercase base32 characters (common/ids.ts). */
const ID_BODY_PATTERN = '[0-9a-z]{26}';

/**
 * A path parameter with the shape the server accepts: an ID of its kind (a malformed one is answered 404 like an
 * unknown one) or a flag key (422 otherwise).
 */
export function pathParameter(path: string, name: string): JsonObject {
  // The same kinds the pipeline checks the IDs of a path against (path-params.ts).
  const kind = pathIdKinds(path)[name];
  if (name === 'flag_key')
    return {
      name,
      in: 'path',
      required: true,
      description: 'The flag key: 1 to 128 letters, digits, _ . -',
      schema: { type: 'string', pattern: FLAG_KEY.source },
      example: 'new-checkout',
    };
  if (!kind) throw new Error(`${path}: no ID kind is known for the path parameter ${name}`);
  const prefix = ID_PREFIXES[kind];
  return {
    name,
    in: 'path',
    required: true,
    description: `The ID (${prefix} and 26 base32 characters); a malformed or unknown ID answers 404 not_found`,
    schema: { type: 'string', pattern: `^${prefix}${ID_BODY_PATTERN}$` },
    example: exampleId(prefix),
  };
}
