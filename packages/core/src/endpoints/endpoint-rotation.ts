import type { EntityManager } from 'typeorm';
import { addMs, SECOND, type Clock } from '../common/clock.js';
import { ServiceError } from '../common/errors.js';
import type { EndpointCredentialsService } from './endpoint-credentials.service.js';
import { newSigningCredential } from './endpoint-secrets.js';
import type { EndpointEntity } from './endpoint.entity.js';
import type { RotateSecretInput } from './endpoint.inputs.js';
import { applyEndpointChange } from './endpoint-writes.js';

/**
 * A new signing secret (and scheme, if asked) for a locked endpoint: the previous one keeps signing for
 * overlap_seconds (0 retires it at once). 409 invalid_state while a previous one is still in its overlap, unless
 * overlap_seconds is 0. Answers the changed endpoint and the new secret, shown this once (null:
 * an ed25519 secret key, never shown).
 */
export async function rotateSigningSecret(
  tx: EntityManager,
  credentials: EndpointCredentialsService,
  endpoint: EndpointEntity,
  input: RotateSecretInput,
  keyId: string,
  clock: Clock,
): Promise<{ rotated: EndpointEntity; shown: string | null }> {
  const { overlap_seconds: overlapSeconds } = input;
  const now = clock.now();
  if (overlapSeconds !== 0 && endpoint.oldSecretExpiresAt && endpoint.oldSecretExpiresAt > now)
    throw new ServiceError(
      'invalid_state',
      'a previous secret is still in its overlap; rotate with overlap_seconds 0 to retire it',
    );
  const version = endpoint.secretVersion + 1;
  const overlapEnd = addMs(now, overlapSeconds * SECOND);
  const scheme = input.signature_scheme ?? endpoint.signatureScheme;
  const credential = newSigningCredential(scheme);
  const { secrets } = credentials;
  await secrets.addCurrent(tx, endpoint.id, version, credential.sealed, keyId, now);
  await secrets.retireOlder(tx, endpoint.id, version, overlapSeconds === 0 ? now : overlapEnd);
  const rotated = await applyEndpointChange(tx, clock, endpoint, {
    secretVersion: version,
    oldSecretExpiresAt: overlapSeconds === 0 ? null : overlapEnd,
    signatureScheme: scheme,
    publicKey: credential.publicKey,
    // The key that keeps signing through the overlap stays readable with it (null when it was hmac).
    oldPublicKey: overlapSeconds === 0 ? null : endpoint.publicKey,
  });
  return { rotated, shown: credential.shown };
}
