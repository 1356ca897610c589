export { signPayload, generateSecret, decodeSecret, SECRET_PREFIX } from './standard-webhooks.js';
export type { SignPayloadInput } from './standard-webhooks.js';
