import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { VERIFICATION_KINDS } from '../../catalog/catalog.js';
import { ServiceError } from '../../common/errors.js';
import { parseVerification, parseVerificationSettings, verifierFor, VERIFIERS } from './index.js';
import { inbound, NOW } from './verifier-test-support.js';

function invalidFieldOf(run: () => unknown): { field: string | undefined; message: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'invalid_field')
      return { field: error.details.field, message: error.message };
    throw error;
  }
  throw new Error('expected 422 invalid_field');
}

describe('verifier kinds', () => {
  it('has exactly one verifier per advertised kind', () => {
    expect(Object.keys(VERIFIERS).sort()).toEqual([...VERIFICATION_KINDS].sort());
    for (const kind of VERIFICATION_KINDS) expect(VERIFIERS[kind].kind).toBe(kind);
  });

  it('generates secrets for standard_webhooks and bearer only', () => {
    const generating = VERIFICATION_KINDS.filter((kind) => verifierFor(kind).generateSecret() !== null);
    expect(generating).toEqual(['standard_webhooks', 'bearer']);
  });

  it('refuses an unknown stored kind loudly', () => {
    expect(() => verifierFor('carrier_pigeon')).toThrow(/unknown verifier kind/);
  });

  it('verifies with settings as stored, filling in defaults', () => {
    const stored: Record<string, unknown> = { header: 'X-Sig' };
    const mac = createHmac('sha256', 'a-secret-of-ours').update('{}').digest('hex');
    const verdict = verifierFor('hmac').verify(inbound('{}', [['X-Sig', mac]]), stored, ['a-secret-of-ours'], NOW);
    expect(verdict).toEqual({ ok: true, eventId: null });
  });
});

describe('parseVerification', () => {
  it.each([
    ['standard_webhooks', {}],
    ['bearer', {}],
    ['payments', { secret: 'whsec_abcdefghijklmnopqrstuvwxyz012345' }],
    ['codehost', { secret: 'anything' }],
    ['commerce', { secret: 'shpss_0123456789abcdef' }],
    ['chat', { secret: '8f742231b10e8888abcd99yyyzzz85a5' }],
    ['telephony', { secret: '5d41402abc4b2a76b9719d911017c592' }],
  ])('takes a %s verification without settings', (kind, rest) => {
    expect(parseVerification({ kind, ...rest })).toEqual({ kind, settings: {}, ...rest });
  });

  it.each([
    [undefined, 'verification', 'verification'],
    ['payments', 'verification', 'verification'],
    [{}, 'verification.kind', 'verification.kind is required'],
    [{ kind: 'stripe' }, 'verification.kind', 'must be one of standard_webhooks, hmac, bearer'],
    [{ kind: 'payments', secret: 42 }, 'verification.secret', 'must be a string'],
    [{ kind: 'payments', secret: 'sk_live_123' }, 'verification.secret', 'whsec_'],
    [{ kind: 'standard_webhooks', secret: 'whsec_tooshort' }, 'verification.secret', 'whsec_'],
    [{ kind: 'codehost', header: 'X-Hub-Signature-256' }, 'verification.header', 'unknown field'],
  ])('refuses %j with 422 invalid_field on %s', (input, field, message) => {
    const error = invalidFieldOf(() => parseVerification(input));
    expect(error.field).toBe(field);
    expect(error.message).toContain(message);
  });
});

describe('parseVerificationSettings (PATCH)', () => {
  it('gives every setting, with defaults for those left out', () => {
    expect(parseVerificationSettings('hmac', { header: 'X-Sig', encoding: 'base64' })).toEqual({
      header: 'X-Sig',
      algorithm: 'sha256',
      encoding: 'base64',
      prefix: null,
      timestamp_header: null,
      signed_content: '{body}',
      event_id_header: null,
    });
    expect(parseVerificationSettings('chat', {})).toEqual({});
  });

  it('refuses the secret and unknown settings', () => {
    expect(invalidFieldOf(() => parseVerificationSettings('bearer', { secret: 'x' })).field).toBe(
      'verification.secret',
    );
    expect(invalidFieldOf(() => parseVerificationSettings('hmac', { header: 'X', kind: 'hmac' })).field).toBe(
      'verification.kind',
    );
  });
});
