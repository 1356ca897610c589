import {
  compileFilter,
  compileTransform,
  FilterSpecError,
  TransformSpecError,
  type CompiledFilter,
  type CompiledTransform,
} from '@svc/json';
import { ServiceError } from '../common/errors.js';
import type { RawJson } from '../common/raw-json.js';

export interface CompiledRules {
  filter: CompiledFilter | null;
  transform: CompiledTransform | null;
}

function compileOne<T>(field: 'filter' | 'transform', text: string | null, compile: (source: string) => T): T | null {
  if (text === null) return null;
  try {
    return compile(text);
  } catch (error) {
    if (error instanceof FilterSpecError || error instanceof TransformSpecError) {
      const location = error.path ? `${field}.${error.path}` : field;
      throw new ServiceError('invalid_field', `${location}: ${error.message}`, { field: location });
    }
    throw error;
  }
}

/** Validates (and compiles) an endpoint's filter and transform from their exact JSON text; 422 invalid_field naming the spot. */
export function compileRules(filter: RawJson | string | null, transform: RawJson | string | null): CompiledRules {
  const text = (value: RawJson | string | null) => (value === null || typeof value === 'string' ? value : value.text);
  return {
    filter: compileOne('filter', text(filter), compileFilter),
    transform: compileOne('transform', text(transform), compileTransform),
  };
}
