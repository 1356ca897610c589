import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ServiceError } from './errors.js';

const FORMAT_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID_BYTES = 4;

/**
 * A value sealed with another key (its key ID is not this process's): the value is fine, the process has the wrong
 * SVC_ENCRYPTION_KEY. Callers that can tell the process's fault from the value's (the delivery engine) catch this;
 * everyone else sees the ServiceError it is.
 */
export class SealedWithAnotherKey extends ServiceError {
  constructor(
    /** The key ID (hex) the value names. */
    readonly sealedKeyId: string,
  ) {
    super('temporarily_unavailable', 'a secret was sealed with another key');
  }
}

/**
 * Seals secrets at rest with AES-256-GCM. A sealed value is: format version (1 byte), the key's ID (first 4
 * bytes of its SHA-256, so a later key rotation can tell keys apart), the IV, the tag and the ciphertext. The
 * associated data binds a sealed value to its purpose and owner, so a value copied to another row does not open.
 */
export class Sealer {
  private readonly keyIdBytes: Buffer;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the sealing key must be 32 bytes');
    this.keyIdBytes = createHash('sha256').update(key).digest().subarray(0, KEY_ID_BYTES);
  }

  /** This key's ID (hex): a fingerprint every sealed value carries, safe to print (it is not the key). */
  get keyId(): string {
    return this.keyIdBytes.toString('hex');
  }

  /** The key ID (hex) a sealed value names, or null when it is not a sealed value of a known format. */
  static keyIdOf(sealed: Buffer): string | null {
    if (sealed.length < 1 + KEY_ID_BYTES || sealed[0] !== FORMAT_VERSION) return null;
    return sealed.subarray(1, 1 + KEY_ID_BYTES).toString('hex');
  }

  static generateKey(): Buffer {
    return randomBytes(32);
  }

  seal(plaintext: string, context: string): Buffer {
    try {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', this.key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return Buffer.concat([Buffer.from([FORMAT_VERSION]), this.keyIdBytes, iv, cipher.getAuthTag(), ciphertext]);
    } catch {
      throw new ServiceError('temporarily_unavailable', 'could not seal a secret; retry');
    }
  }

  /**
   * Opens a sealed value. A value of another key throws SealedWithAnotherKey (the process's key is wrong); a value
   * of this key that does not open (tampered, truncated, another context) or of no known format a plain ServiceError.
   */
  open(sealed: Buffer, context: string): string {
    const header = 1 + KEY_ID_BYTES;
    const keyId = Sealer.keyIdOf(sealed);
    if (keyId === null) throw new ServiceError('temporarily_unavailable', 'a sealed secret could not be opened');
    if (keyId !== this.keyId) throw new SealedWithAnotherKey(keyId);
    const iv = sealed.subarray(header, header + IV_BYTES);
    const tag = sealed.subarray(header + IV_BYTES, header + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([
        decipher.update(sealed.subarray(header + IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new ServiceError('temporarily_unavailable', 'a sealed secret could not be opened');
    }
  }
}
