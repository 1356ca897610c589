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

export function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

export function isIntegerArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((v) => Number.isInteger(v));
}

export function isNullableString(value: unknown): value is string | null {
  return value === null || typeof value === 'string';
}

export function isInteger(value: unknown): value is number {
  return Number.isInteger(value);
}
