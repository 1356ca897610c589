import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ServiceError } from './errors.js';

const FORMAT_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID_BYTES = 4;

/**
 * Seals secrets at rest with AES-256-GCM. A sealed value is: format version (1 byte), the key's ID (first 4
 * bytes of its SHA-256, so a later key rotation can tell keys apart), the IV, the tag and the ciphertext. The
 * associated data binds a sealed value to its purpose and owner, so a value copied to another row does not open.
 */
export class Sealer {
  private readonly keyId: Buffer;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the sealing key must be 32 bytes');
    this.keyId = createHash('sha256').update(key).digest().subarray(0, KEY_ID_BYTES);
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
      return Buffer.concat([Buffer.from([FORMAT_VERSION]), this.keyId, iv, cipher.getAuthTag(), ciphertext]);
    } catch {
      throw new ServiceError('temporarily_unavailable', 'could not seal a secret; retry');
    }
  }

  open(sealed: Buffer, context: string): string {
    const header = 1 + KEY_ID_BYTES;
    if (sealed[0] !== FORMAT_VERSION || !sealed.subarray(1, header).equals(this.keyId))
      throw new ServiceError('temporarily_unavailable', 'a secret was sealed with another key');
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
