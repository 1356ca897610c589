import { createHash, randomBytes } from 'node:crypto';
import type { KeyKind } from './api-key.entity.js';

export const SECRET_KEY_PREFIX = 'svc_sk_';
export const PUBLISHABLE_KEY_PREFIX = 'svc_pk_';
const KEY_BODY = /^[A-Za-z0-9_-]{24,128}$/;

export function generateKey(kind: KeyKind): string {
  return (kind === 'secret' ? SECRET_KEY_PREFIX : PUBLISHABLE_KEY_PREFIX) + randomBytes(32).toString('base64url');
}

export function isWellFormedKey(value: string): boolean {
  const body = value.startsWith(SECRET_KEY_PREFIX)
    ? value.slice(SECRET_KEY_PREFIX.length)
    : value.startsWith(PUBLISHABLE_KEY_PREFIX)
      ? value.slice(PUBLISHABLE_KEY_PREFIX.length)
      : null;
  return body !== null && KEY_BODY.test(body);
}

export function isValidSecretKey(value: string): boolean {
  return value.startsWith(SECRET_KEY_PREFIX) && isWellFormedKey(value);
}

export function hashKey(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
