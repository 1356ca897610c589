export { signPayload, generateSecret, decodeSecret, SECRET_PREFIX } from './standard-webhooks.js';
export type { SignPayloadInput } from './standard-webhooks.js';
export { signSvcSignature, generateSvcSecret, decodeSvcSecret, SVC_SECRET_PREFIX } from './svc-signature.js';
export type { SvcSignatureInput } from './svc-signature.js';
