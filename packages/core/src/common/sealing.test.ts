import { describe, expect, it } from 'vitest';
import { Sealer } from './sealing.js';

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
});
