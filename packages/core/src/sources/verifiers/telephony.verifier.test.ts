import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { telephonyVerifier as verifier } from './telephony.verifier.js';
import { reject, type InboundRequest } from './verifier.js';
import { inbound, itBehavesLikeAVerifier, NOW, PUBLIC_URL } from './verifier-test-support.js';

const secrets = {
  current: '5d41402abc4b2a76b9719d911017c592',
  previous: '7d793037a0760186574b0282f2f435e7',
  unrelated: '00000000000000000000000000000000',
};
const FORM = 'application/x-www-form-urlencoded';
const STATUS_CALLBACK =
  'MessageSid=SM1234567890abcdef&MessageStatus=delivered&To=%2B15558675310&From=%2B15017122661&Body=Hello+world%21';
const IDEMPOTENCY = 'ac7d2a9c-0d3b-4b1e-9a8e-1f2e3d4c5b6a-1';

/** The form parameters as a body parser hands them to twilio's library (repeated names as arrays). */
function formParams(body: string): Record<string, string | string[]> {
  const params: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const seen = params[name];
    params[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return params;
}

/** A form-encoded request as Twilio sends it, signed by the official `twilio` library. */
function signedForm(token: string, body: Buffer | string, url = PUBLIC_URL, signedUrl = url): InboundRequest {
  const signature = twilio.getExpectedTwilioSignature(token, signedUrl, formParams(body.toString()));
  return inbound(
    body,
    [
      ['Content-Type', `${FORM}; charset=utf-8`],
      ['X-Twilio-Signature', signature],
      ['I-Twilio-Idempotency-Token', IDEMPOTENCY],
    ],
    url,
  );
}

/** A JSON request: Twilio adds bodySHA256 to the URL, and signs the URL alone. */
function signedJson(token: string, body: string): InboundRequest {
  const url = `${PUBLIC_URL}?bodySHA256=${twilio.getExpectedBodyHash(body)}`;
  const signature = twilio.getExpectedTwilioSignature(token, url, {});
  return inbound(
    body,
    [
      ['Content-Type', 'application/json'],
      ['X-Twilio-Signature', signature],
    ],
    url,
  );
}

const verify = (request: InboundRequest, active = [secrets.current]) => verifier.verify(request, {}, active, NOW);

/** What the official validator says about the same request. */
function officialVerdict(token: string, request: InboundRequest): boolean {
  const header = request.rawHeaders[request.rawHeaders.findIndex((h) => h.toLowerCase() === 'x-twilio-signature') + 1];
  if (new URL(request.publicUrl).searchParams.has('bodySHA256'))
    return twilio.validateRequestWithBody(token, header ?? '', request.publicUrl, request.rawBody.toString());
  return twilio.validateRequest(token, header ?? '', request.publicUrl, formParams(request.rawBody.toString()));
}

describe('telephony verifier (Twilio scheme)', () => {
  itBehavesLikeAVerifier({
    verifier,
    settings: {},
    secrets,
    sign: (secret, body) => signedForm(secret, body),
    body: STATUS_CALLBACK,
    tamperedBody: STATUS_CALLBACK.replace('delivered', 'failed'),
    eventId: IDEMPOTENCY,
    requiredHeaders: ['X-Twilio-Signature'],
    onceOnlyHeaders: ['X-Twilio-Signature', 'I-Twilio-Idempotency-Token'],
    timestamped: false,
  });

  it("verifies the worked example of Twilio's security docs (auth token 12345)", () => {
    const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
    const body = 'CallSid=CA1234567890ABCDE&Caller=%2B14158675310&Digits=1234&From=%2B14158675310&To=%2B18005551212';
    const request = inbound(
      body,
      [
        ['Content-Type', FORM],
        ['X-Twilio-Signature', 'GvWf1cFY/Q7PnoempGyD5oXAezc='],
      ],
      url,
    );
    expect(twilio.getExpectedTwilioSignature('12345', url, formParams(body))).toBe('GvWf1cFY/Q7PnoempGyD5oXAezc=');
    expect(verifier.verify(request, {}, ['12345'], NOW)).toEqual({ ok: true, eventId: null });
  });

  it('signs parameters in sorted name order whatever order they arrive in, repeated names included', () => {
    const body = 'To=%2B1555&From=%2B1444&MediaUrl=https%3A%2F%2Fb&MediaUrl=https%3A%2F%2Fa&Body=caf%C3%A9+%E2%9C%93';
    const request = signedForm(secrets.current, body);
    expect(verify(request).ok).toBe(true);
    expect(officialVerdict(secrets.current, request)).toBe(true);
  });

  it('verifies JSON bodies by the bodySHA256 the signed URL carries, as validateRequestWithBody does', () => {
    const body = '{"event":"call.completed","sid":"CA1"}';
    const request = signedJson(secrets.current, body);
    expect(verify(request)).toEqual({ ok: true, eventId: null });
    expect(officialVerdict(secrets.current, request)).toBe(true);

    const tampered = { ...request, rawBody: Buffer.from('{"event":"call.completed","sid":"CA2"}') };
    expect(verify(tampered)).toEqual(reject('bad_signature'));
    expect(officialVerdict(secrets.current, tampered)).toBe(false);
  });

  it('refuses a JSON body whose URL carries no bodySHA256: nothing would cover the body', () => {
    const request = inbound('{"a":1}', [
      ['Content-Type', 'application/json'],
      ['X-Twilio-Signature', 'AAAAAAAAAAAAAAAAAAAAAAAAAAA='],
    ]);
    expect(verify(request)).toEqual(reject('malformed_body'));
  });

  it('verifies an empty body over the URL alone', () => {
    const request = signedForm(secrets.current, '');
    expect(verify(request).ok).toBe(true);
  });

  it.each([
    ['with the standard port, called without', PUBLIC_URL.replace('.test/', '.test:443/'), PUBLIC_URL],
    ['without a port, called with the standard one', PUBLIC_URL, PUBLIC_URL.replace('.test/', '.test:443/')],
  ])('accepts a URL signed %s, as validateRequest does', (_name, signedUrl, calledUrl) => {
    const request = signedForm(secrets.current, STATUS_CALLBACK, calledUrl, signedUrl);
    expect(verify(request).ok).toBe(true);
    expect(officialVerdict(secrets.current, request)).toBe(true);
  });

  it('signs the URL as called: another path, query or scheme does not verify', () => {
    for (const signedUrl of [
      PUBLIC_URL.replace('rcv_4kT9mQ2xZ7', 'rcv_other'),
      `${PUBLIC_URL}?x=1`,
      PUBLIC_URL.replace('https:', 'http:'),
    ]) {
      const request = signedForm(secrets.current, STATUS_CALLBACK, PUBLIC_URL, signedUrl);
      expect(verify(request)).toEqual(reject('bad_signature'));
      expect(officialVerdict(secrets.current, request)).toBe(false);
    }
  });

  it('accepts only what the official validator accepts', () => {
    const cases = [
      signedForm(secrets.current, STATUS_CALLBACK),
      signedForm(secrets.current, STATUS_CALLBACK, `${PUBLIC_URL}?q=it's`),
      signedForm(secrets.current, STATUS_CALLBACK, `${PUBLIC_URL}?q=it's`, `${PUBLIC_URL}?q=it%27s`),
      signedForm(secrets.previous, STATUS_CALLBACK),
      signedJson(secrets.current, '{"x":true}'),
    ];
    for (const request of cases) {
      const ours = verify(request).ok;
      if (ours) expect(officialVerdict(secrets.current, request)).toBe(true);
    }
    expect(cases.filter((request) => verify(request).ok)).toHaveLength(4);
  });

  it('deduplicates by body without I-Twilio-Idempotency-Token', () => {
    const signature = twilio.getExpectedTwilioSignature(secrets.current, PUBLIC_URL, formParams(STATUS_CALLBACK));
    const request = inbound(STATUS_CALLBACK, [
      ['Content-Type', FORM],
      ['X-Twilio-Signature', signature],
    ]);
    expect(verify(request)).toEqual({ ok: true, eventId: null });
  });

  it('refuses a signature that is not Base64 as malformed_signature', () => {
    const request = inbound(STATUS_CALLBACK, [
      ['Content-Type', FORM],
      ['X-Twilio-Signature', 'not base64!'],
    ]);
    expect(verify(request)).toEqual(reject('malformed_signature'));
  });

  it('answers with empty TwiML as text/xml', () => {
    expect(verifier.accepted('msg_1', false)).toEqual({
      status: 200,
      contentType: 'text/xml',
      body: '<?xml version="1.0" encoding="UTF-8"?><Response/>',
    });
  });
});
