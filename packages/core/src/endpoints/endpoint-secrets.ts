import { randomBytes } from 'node:crypto';
import { generateKeyPair, SECRET_PREFIX } from '@svc/signing';
import type { EntityManager } from 'typeorm';
import { IsNull, MoreThan } from 'typeorm';
import type { Sealer } from '../common/sealing.js';
import { EndpointSecretEntity, type SignatureScheme } from './endpoint.entity.js';

/** whsec_ + standard Base64 of 32 random bytes (the spec allows 24 to 64). */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A new signing credential of `scheme`: what is sealed, what the create or rotate answer shows, the public key. */
export function newSigningCredential(scheme: SignatureScheme): {
  sealed: string;
  shown: string | null;
  publicKey: string | null;
} {
  if (scheme === 'hmac') {
    const secret = generateSigningSecret();
    return { sealed: secret, shown: secret, publicKey: null };
  }
  const pair = generateKeyPair();
  return { sealed: pair.secretKey, shown: null, publicKey: pair.publicKey };
}

const secretContext = (endpointId: string, version: number) => `endpoint:${endpointId}:secret:${version}`;

/** Signing secrets: stored sealed, one row per version; the current one has no expiry. */
export class EndpointSecrets {
  constructor(private readonly sealer: Sealer) {}

  async addCurrent(
    tx: EntityManager,
    endpointId: string,
    version: number,
    secret: string,
    keyId: string,
    now: Date,
  ): Promise<void> {
    await tx.getRepository(EndpointSecretEntity).insert({
      endpointId,
      secretVersion: version,
      secretSealed: this.sealer.seal(secret, secretContext(endpointId, version)),
      createdByKeyId: keyId,
      createdAt: now,
      expiresAt: null,
    });
  }

  /** Ends the signing life of every secret but the current one at `until` (now retires them at once). */
  async retireOlder(tx: EntityManager, endpointId: string, currentVersion: number, until: Date): Promise<void> {
    await tx.query(
      `UPDATE endpoint_secrets SET expires_at = $3
        WHERE endpoint_id = $1 AND secret_version <> $2 AND (expires_at IS NULL OR expires_at > $3)`,
      [endpointId, currentVersion, until],
    );
  }

  /**
   * The current HMAC secret when it is still `version` and was made by `keyId` (idempotent replays show it only
   * then). An ed25519 secret key is never shown: null.
   */
  async currentFor(tx: EntityManager, endpointId: string, version: number, keyId: string): Promise<string | null> {
    const row = await tx
      .getRepository(EndpointSecretEntity)
      .findOneBy({ endpointId, secretVersion: version, expiresAt: IsNull() });
    if (!row || row.createdByKeyId !== keyId) return null;
    const secret = this.sealer.open(row.secretSealed, secretContext(endpointId, version));
    return secret.startsWith(SECRET_PREFIX) ? secret : null;
  }

  /**
   * The current HMAC secret whoever made it, for the receivers' portal's reveal (docs/portal.md: the tenant who owns
   * the endpoint reads it behind a recorded action); null for an ed25519 endpoint (its public key is not secret).
   */
  async current(tx: EntityManager, endpointId: string, version: number): Promise<string | null> {
    const row = await tx
      .getRepository(EndpointSecretEntity)
      .findOneBy({ endpointId, secretVersion: version, expiresAt: IsNull() });
    if (!row) return null;
    const secret = this.sealer.open(row.secretSealed, secretContext(endpointId, version));
    return secret.startsWith(SECRET_PREFIX) ? secret : null;
  }

  /** Opens one sealed secret row (the delivery engine reads the rows of many endpoints in one query). */
  open(endpointId: string, version: number, sealed: Buffer): string {
    return this.sealer.open(sealed, secretContext(endpointId, version));
  }

  /** Every secret that signs at `at`: the current one first, then those still in their overlap. */
  async signingSecrets(tx: EntityManager, endpointId: string, at: Date): Promise<string[]> {
    const rows = await tx.getRepository(EndpointSecretEntity).find({
      where: [
        { endpointId, expiresAt: IsNull() },
        { endpointId, expiresAt: MoreThan(at) },
      ],
      order: { secretVersion: 'DESC' },
    });
    return rows.map((row) => this.sealer.open(row.secretSealed, secretContext(endpointId, row.secretVersion)));
  }
}
