import 'server-only';
import type { ActionResult } from './api-error';

/** Server actions are public endpoints: a malformed argument is answered like the API would answer it. */
export function invalidArgument(field: string, message: string): ActionResult<never> {
  return { ok: false, error: { code: 'invalid_field', message, field } };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isStringRecord(value: unknown): value is Record<string, string> {
  return isObject(value) && Object.values(value).every((v) => typeof v === 'string');
}
