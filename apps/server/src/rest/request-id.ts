import { randomBytes } from 'node:crypto';

/** The Request-Id of an answer: `req_` and 16 base64url characters. */
export function newRequestId(): string {
  return `req_${randomBytes(12).toString('base64url')}`;
}
