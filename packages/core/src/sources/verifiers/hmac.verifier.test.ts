import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../common/errors.js';
import { hmacSettings, hmacVerifier as verifier, type HmacSettings } from './hmac.verifier.js';
import { parseVerification } from './index.js';
import { reject } from './verifier.js';
import { inbound, itBehavesLikeAVerifier, NOW, NOW_SECONDS } from './verifier-test-support.js';

// A generic scheme has no official library: the reference is node:crypto computing what a sender documents.
const secrets = { current: 'shh-current-0001', previous: 'shh-previous-0002', unrelated: 'shh-someone-else' };

const settingsOf = (input: Record<string, unknown>): HmacSettings => hmacSettings.parse(input);

describe('hmac verifier, GitHub-like: prefix, hex, event ID header', () => {
  const settings = settingsOf({ header: 'X-Acme-Signature', prefix: 'sha256=', event_id_header: 'X-Acme-Delivery' });
  itBehavesLikeAVerifier({
    verifier,
    settings,
    secrets,
    sign: (secret, body) =>
      inbound(body, [
        ['X-Acme-Signature', `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`],
        ['X-Acme-Delivery', 'dlv_81'],
      ]),
    body: '{"order":42}',
    tamperedBody: '{"order":43}',
    eventId: 'dlv_81',
    requiredHeaders: ['X-Acme-Signature'],
    onceOnlyHeaders: ['X-Acme-Signature', 'X-Acme-Delivery'],
    timestamped: false,
  });

  it('has no event ID without the event ID header (the caller deduplicates by body)', () => {
    const mac = createHmac('sha256', secrets.current).update('{}').digest('hex');
    const request = inbound('{}', [['x-acme-signature', `sha256=${mac}`]]);
    expect(verifier.verify(request, settings, [secrets.current], NOW)).toEqual({ ok: true, eventId: null });
  });

  it('refuses a signature without the prefix, or not in hex, as malformed_signature', () => {
    const mac = createHmac('sha256', secrets.current).update('{}').digest('hex');
    for (const value of [mac, 'sha256=xyz', 'sha256=']) {
      const request = inbound('{}', [['X-Acme-Signature', value]]);
      expect(verifier.verify(request, settings, [secrets.current], NOW)).toEqual(reject('malformed_signature'));
    }
  });
});

describe('hmac verifier, timestamped: {timestamp}.{body}, sha512, Base64', () => {
  const settings = settingsOf({
    header: 'Signature',
    algorithm: 'sha512',
    encoding: 'base64',
    timestamp_header: 'Signature-Timestamp',
    signed_content: '{timestamp}.{body}',
  });
  itBehavesLikeAVerifier({
    verifier,
    settings,
    secrets,
    sign: (secret, body, timestamp) =>
      inbound(body, [
        ['Signature', createHmac('sha512', secret).update(`${timestamp}.`).update(body).digest('base64')],
        ['Signature-Timestamp', String(timestamp)],
      ]),
    body: 'plain text body',
    tamperedBody: 'plain text body!',
    eventId: null,
    requiredHeaders: ['Signature', 'Signature-Timestamp'],
    onceOnlyHeaders: ['Signature', 'Signature-Timestamp'],
    timestamped: true,
  });

  it('signs the timestamp: moving it breaks the signature', () => {
    const mac = createHmac('sha512', secrets.current)
      .update(`${NOW_SECONDS - 1000}.x`)
      .digest('base64');
    const request = inbound('x', [
      ['Signature', mac],
      ['Signature-Timestamp', String(NOW_SECONDS)],
    ]);
    expect(verifier.verify(request, settings, [secrets.current], NOW)).toEqual(reject('bad_signature'));
  });
});

describe('hmac verifier settings', () => {
  it('defaults to sha256, hex, no prefix, the body alone', () => {
    expect(parseVerification({ kind: 'hmac', header: 'X-Sig', secret: 'abcdefgh' })).toEqual({
      kind: 'hmac',
      secret: 'abcdefgh',
      settings: {
        header: 'X-Sig',
        algorithm: 'sha256',
        encoding: 'hex',
        prefix: null,
        timestamp_header: null,
        signed_content: '{body}',
        event_id_header: null,
      },
    });
  });

  it('verifies sha1 and text around the body, such as a Square-like URL + body', () => {
    const settings = settingsOf({ header: 'X-Sig', algorithm: 'sha1', signed_content: 'https://a.example/hook{body}' });
    const mac = createHmac('sha1', secrets.current).update('https://a.example/hook').update('{}').digest('hex');
    expect(verifier.verify(inbound('{}', [['X-Sig', mac.toUpperCase()]]), settings, [secrets.current], NOW).ok).toBe(
      true,
    );
  });

  it.each([
    [{ kind: 'hmac' }, 'verification.header', 'verification.header is required'],
    [{ kind: 'hmac', header: 'X Sig' }, 'verification.header', 'must be an HTTP header name'],
    [{ kind: 'hmac', header: 'X-Sig', algorithm: 'md5' }, 'verification.algorithm', ''],
    [{ kind: 'hmac', header: 'X-Sig', encoding: 'base32' }, 'verification.encoding', ''],
    [{ kind: 'hmac', header: 'X-Sig', colour: 'red' }, 'verification.colour', 'unknown field'],
    [{ kind: 'hmac', header: 'X-Sig', signed_content: '{timestamp}' }, 'verification.signed_content', '{body}'],
    [{ kind: 'hmac', header: 'X-Sig', signed_content: '{body}{body}' }, 'verification.signed_content', 'exactly once'],
    [{ kind: 'hmac', header: 'X-Sig', signed_content: '{ts}.{body}' }, 'verification.signed_content', '{ts}'],
    [{ kind: 'hmac', header: 'X-Sig', timestamp_header: 'X-Ts' }, 'verification.signed_content', '{timestamp}'],
    [
      { kind: 'hmac', header: 'X-Sig', signed_content: '{timestamp}.{body}' },
      'verification.timestamp_header',
      'required',
    ],
    [{ kind: 'hmac', header: 'X-Sig', event_id_header: 'x-sig' }, 'verification.header', 'must differ'],
    [{ kind: 'hmac', header: 'X-Sig', prefix: 'sha 256=' }, 'verification.prefix', 'without spaces'],
    [{ kind: 'hmac', header: 'X-Sig', secret: 'short' }, 'verification.secret', '8 to 512 bytes'],
    [{ kind: 'hmac', header: 'X-Sig', secret: 'long enough\n' }, 'verification.secret', 'whitespace'],
  ])('refuses %j with 422 invalid_field on %s', (input, field, message) => {
    const error = catchError(() => parseVerification(input));
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ code: 'invalid_field', details: { field } });
    expect((error as ServiceError).message).toContain(message);
  });

  it('answers with the message ID as JSON', () => {
    expect(JSON.parse(verifier.accepted('msg_9', true).body)).toEqual({ message_id: 'msg_9', duplicate: true });
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
