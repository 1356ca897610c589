/**
 * Endpoint transforms: the JSON object delivered instead of the message body.
 *
 * A transform is given as JSON text so that its literals keep their exact bytes. It is exactly
 * `{"fields": [field, ...]}` with 1 to 50 fields, each one of:
 *
 * - `{"name": <string>, "from": <JSON Pointer>}` with an optional `"required": <boolean>` (false unless given):
 *   copies the body's value at `from`;
 * - `{"name": <string>, "value": <any JSON value>}`: writes that literal.
 *
 * Names are 1 to 128 UTF-8 bytes and unique (compared decoded); no other keys are allowed.
 *
 * The output is a new JSON object with no whitespace, its members sorted by the Unicode code points of the decoded
 * names (not by UTF-16 code units, which would put U+10000 and above before U+E000..U+FFFF). Each name is written
 * as JSON.stringify writes it; each copied value is the minified source text of the body's node, so number
 * spellings (1.0e3) and escapes (\u00e9) are kept; each literal is its minified text from the transform. A missing
 * `from` omits the field, or fails the whole transform when the field is required (the failure names the first
 * such field in output order).
 *
 * An invalid transform throws TransformSpecError whose `path` locates the offending part (`fields.3.from`; '' is
 * the whole transform).
 */
import { compareCodePoints } from './codepoint.js';
import { JsonSyntaxError } from './errors.js';
import { rawText } from './minify.js';
import type { JsonNode, JsonObjectNode } from './node.js';
import { parseStrict } from './parse.js';
import { parsePointer, resolvePointer } from './pointer.js';
import { childLocation, jsonKindName, membersByKey } from './spec-input.js';
import { byteLength } from './utf8.js';

export const MAX_TRANSFORM_FIELDS = 50;
export const MAX_TRANSFORM_NAME_BYTES = 128;

/** The transform text is not a valid transform. `path` locates the problem inside it, e.g. `fields.3.from`. */
export class TransformSpecError extends Error {
  readonly path: string;

  constructor(path: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TransformSpecError';
    this.path = path;
  }
}

/** The output object text, or the field that made the transform fail (the message is then refused with 422). */
export type TransformResult = { ok: true; output: string } | { ok: false; field: string; message: string };

export interface CompiledTransform {
  /** Field names in output order. */
  readonly fieldNames: readonly string[];
  /** Builds the output from a body and the node parseStrict gave for that same text. */
  apply(bodySource: string, body: JsonNode): TransformResult;
}

type TransformField = { name: string; nameText: string } & (
  { kind: 'copy'; pointer: string; tokens: string[]; required: boolean } | { kind: 'literal'; text: string }
);

const COPY_KEYS: readonly string[] = ['name', 'from', 'required'];
const LITERAL_KEYS: readonly string[] = ['name', 'value'];

/** Parses and validates transform text; throws TransformSpecError when it is not valid JSON or not a valid transform. */
export function compileTransform(source: string): CompiledTransform {
  const fieldList = readFieldList(parseTransformSource(source));
  const firstIndexByName = new Map<string, number>();
  const fields = fieldList.map((node, index) => {
    const field = readField(source, node, childLocation('fields', index));
    const earlier = firstIndexByName.get(field.name);
    if (earlier !== undefined) {
      throw new TransformSpecError(
        `fields.${index}.name`,
        `duplicate field name ${JSON.stringify(field.name)} (also fields.${earlier}.name)`,
      );
    }
    firstIndexByName.set(field.name, index);
    return field;
  });
  fields.sort((a, b) => compareCodePoints(a.name, b.name));
  return {
    fieldNames: fields.map((field) => field.name),
    apply: (bodySource, body) => apply(fields, bodySource, body),
  };
}

function apply(fields: readonly TransformField[], bodySource: string, body: JsonNode): TransformResult {
  const members: string[] = [];
  for (const field of fields) {
    if (field.kind === 'literal') {
      members.push(`${field.nameText}:${field.text}`);
      continue;
    }
    const found = resolvePointer(body, field.tokens);
    if (found !== undefined) members.push(`${field.nameText}:${rawText(bodySource, found)}`);
    else if (field.required) {
      return { ok: false, field: field.name, message: `required pointer ${JSON.stringify(field.pointer)} is missing` };
    }
  }
  return { ok: true, output: `{${members.join(',')}}` };
}

function parseTransformSource(source: string): JsonNode {
  try {
    return parseStrict(source);
  } catch (error) {
    if (error instanceof JsonSyntaxError) {
      throw new TransformSpecError('', `the transform is not valid JSON: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

function readFieldList(root: JsonNode): JsonNode[] {
  if (root.kind !== 'object') {
    throw new TransformSpecError('', `a transform is an object {fields: [...]}, got a ${jsonKindName(root)}`);
  }
  const unknown = root.members.find((member) => member.key !== 'fields');
  if (unknown !== undefined) {
    throw new TransformSpecError(
      unknown.key,
      `unknown key ${JSON.stringify(unknown.key)}: a transform has only fields`,
    );
  }
  const fields = root.members[0]?.value;
  if (fields === undefined) throw new TransformSpecError('fields', 'a transform needs fields');
  if (fields.kind !== 'array' || fields.items.length === 0 || fields.items.length > MAX_TRANSFORM_FIELDS) {
    const found = fields.kind === 'array' ? `${fields.items.length} fields` : `a ${jsonKindName(fields)}`;
    throw new TransformSpecError('fields', `fields is an array of 1 to ${MAX_TRANSFORM_FIELDS} fields, got ${found}`);
  }
  return fields.items;
}

function readField(source: string, node: JsonNode, location: string): TransformField {
  if (node.kind !== 'object') {
    throw new TransformSpecError(
      location,
      `a field is {name, from, required?} or {name, value}, got a ${jsonKindName(node)}`,
    );
  }
  const members = membersByKey(node);
  const from = members.get('from');
  const value = members.get('value');
  if (from !== undefined && value !== undefined) {
    throw new TransformSpecError(location, 'a field has either from (a JSON Pointer) or value (a literal), not both');
  }
  if (from === undefined && value === undefined) {
    throw new TransformSpecError(location, 'a field needs from (a JSON Pointer) or value (a literal)');
  }
  checkKeys(node, from !== undefined ? COPY_KEYS : LITERAL_KEYS, location);
  const name = readName(members.get('name'), childLocation(location, 'name'));
  const nameText = JSON.stringify(name);
  if (from === undefined) return { kind: 'literal', name, nameText, text: rawText(source, value!) };
  const { pointer, tokens } = readPointer(from, childLocation(location, 'from'));
  const required = readRequired(members.get('required'), childLocation(location, 'required'));
  return { kind: 'copy', name, nameText, pointer, tokens, required };
}

function checkKeys(node: JsonObjectNode, allowed: readonly string[], location: string): void {
  const unknown = node.members.find((member) => !allowed.includes(member.key));
  if (unknown === undefined) return;
  const reason =
    unknown.key === 'required'
      ? 'required applies only to fields copied with from'
      : `a field has only ${allowed.join(', ')}`;
  throw new TransformSpecError(
    childLocation(location, unknown.key),
    `unknown key ${JSON.stringify(unknown.key)}: ${reason}`,
  );
}

function readName(node: JsonNode | undefined, location: string): string {
  if (node === undefined) throw new TransformSpecError(location, 'a field needs a name');
  if (node.kind !== 'string')
    throw new TransformSpecError(location, `name must be a string, got a ${jsonKindName(node)}`);
  const bytes = byteLength(node.value);
  if (bytes === 0 || bytes > MAX_TRANSFORM_NAME_BYTES) {
    throw new TransformSpecError(location, `name must be 1 to ${MAX_TRANSFORM_NAME_BYTES} UTF-8 bytes, got ${bytes}`);
  }
  return node.value;
}

function readPointer(node: JsonNode, location: string): { pointer: string; tokens: string[] } {
  if (node.kind !== 'string') {
    throw new TransformSpecError(location, `from must be a JSON Pointer string, got a ${jsonKindName(node)}`);
  }
  const tokens = parsePointer(node.value);
  if (tokens === null) {
    throw new TransformSpecError(
      location,
      `${JSON.stringify(node.value)} is not a JSON Pointer: use '' or '/'-separated tokens with ~ written as ~0 and / as ~1`,
    );
  }
  return { pointer: node.value, tokens };
}

function readRequired(node: JsonNode | undefined, location: string): boolean {
  if (node === undefined) return false;
  if (node.kind !== 'true' && node.kind !== 'false') {
    throw new TransformSpecError(location, `required must be true or false, got a ${jsonKindName(node)}`);
  }
  return node.kind === 'true';
}
