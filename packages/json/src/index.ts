export type { JsonNode, JsonMember, JsonObjectNode, JsonArrayNode, JsonContainerNode } from './node.js';
export { isContainer } from './node.js';
export { JsonSyntaxError } from './errors.js';
export type { JsonSyntaxErrorReason } from './errors.js';
export { parseStrict, DEFAULT_MAX_DEPTH } from './parse.js';
export type { ParseOptions } from './parse.js';
export { decodeUtf8Strict, byteLength } from './utf8.js';
export { minify, rawText } from './minify.js';
export { toValue } from './value.js';
export { parsePointer, formatPointer, resolvePointer, JSON_POINTER_PATTERN } from './pointer.js';
export { compareJsonNumbers, isJsonNumber } from './decimal.js';
export { jsonNodesEqual } from './equal.js';
export { canonicalStringify } from './canonical.js';
export {
  compileFilter,
  FilterSpecError,
  FILTER_OPERATORS,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LIST_LENGTH,
} from './filter.js';
export type { CompiledFilter, FilterOperator } from './filter.js';
export { compileTransform, TransformSpecError, MAX_TRANSFORM_FIELDS, MAX_TRANSFORM_NAME_BYTES } from './transform.js';
export type { CompiledTransform, TransformResult } from './transform.js';
