import { describe, expect, it } from 'vitest';
import { SealedWithAnotherKey, Sealer } from './sealing.js';

describe('Sealer', () => {
  const sealer = new Sealer(Sealer.generateKey());

  it('round-trips and never stores the plain text', () => {
    const sealed = sealer.seal('whsec_supersecret', 'endpoint:wde_1:secret:1');
    expect(sealed.includes(Buffer.from('supersecret'))).toBe(false);
    expect(sealer.open(sealed, 'endpoint:wde_1:secret:1')).toBe('whsec_supersecret');
    expect(sealer.seal('same', 'c').equals(sealer.seal('same', 'c'))).toBe(false);
  });

  it('refuses another context, another key and tampered bytes', () => {
    const sealed = sealer.seal('value', 'endpoint:wde_1:authorization');
    expect(() => sealer.open(sealed, 'endpoint:wde_2:authorization')).toThrow();
    expect(() => new Sealer(Sealer.generateKey()).open(sealed, 'endpoint:wde_1:authorization')).toThrow();
    const tampered = Buffer.from(sealed);
    tampered.writeUInt8(tampered.readUInt8(tampered.length - 1) ^ 1, tampered.length - 1);
    expect(() => sealer.open(tampered, 'endpoint:wde_1:authorization')).toThrow();
  });

  it("tells a value of another key (the process's key is wrong) from a value that does not open", () => {
    const sealed = sealer.seal('value', 'c');
    const other = new Sealer(Sealer.generateKey());
    expect(() => other.open(sealed, 'c')).toThrow(SealedWithAnotherKey);
    expect(() => other.open(sealed, 'c')).toThrow(expect.objectContaining({ sealedKeyId: sealer.keyId }));
    const tampered = Buffer.from(sealed);
    tampered.writeUInt8(tampered.readUInt8(tampered.length - 1) ^ 1, tampered.length - 1);
    for (const broken of [tampered, Buffer.from([9, 1, 2]), Buffer.alloc(0)]) {
      let thrown: unknown;
      try {
        sealer.open(broken, 'c');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'temporarily_unavailable' });
      expect(thrown).not.toBeInstanceOf(SealedWithAnotherKey);
    }
    expect(Sealer.keyIdOf(sealed)).toBe(sealer.keyId);
    expect(sealer.keyId).toMatch(/^[0-9a-f]{8}$/);
  });
});
