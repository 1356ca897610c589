export {
  signPayload,
  generateSecret,
  decodeSecret,
  generateKeyPair,
  publicKeyOf,
  SECRET_PREFIX,
  SECRET_KEY_PREFIX,
  PUBLIC_KEY_PREFIX,
} from './standard-webhooks.js';
export type { SignPayloadInput, SigningKeyPair } from './standard-webhooks.js';
export { signSvcSignature, generateSvcSecret, decodeSvcSecret, SVC_SECRET_PREFIX } from './svc-signature.js';
export type { SvcSignatureInput } from './svc-signature.js';
