import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chatVerifier as verifier } from './chat.verifier.js';
import { reject } from './verifier.js';
import { inbound, itBehavesLikeAVerifier, NOW, NOW_SECONDS } from './verifier-test-support.js';

// Slack's official SDKs verify but do not sign, so the generated cases compute Slack's documented base string
// with node:crypto, and the published example of "Verifying requests from Slack" pins that computation.
const SLACK_DOCS = {
  secret: '8f742231b10e8888abcd99yyyzzz85a5',
  timestamp: 1531420618,
  body:
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V' +
    '&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=' +
    '&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN' +
    '&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
};

const secrets = {
  current: 'e3b0c44298fc1c149afbf4c8996fb924',
  previous: '27ae41e4649b934ca495991b7852b855',
  unrelated: '0000000000000000ffffffffffffffff',
};

const EVENT = JSON.stringify({
  token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
  team_id: 'T061EG9R6',
  type: 'event_callback',
  event: { type: 'app_mention', text: '<@U0LAN0Z89> is it everything a river should be?' },
  event_id: 'Ev0PV52K21',
  event_time: 1515449522,
});

function signed(secret: string, body: Buffer | string, timestamp: number, contentType = 'application/json') {
  const mac = createHmac('sha256', secret).update(`v0:${timestamp}:`).update(body).digest('hex');
  return inbound(body, [
    ['Content-Type', contentType],
    ['X-Slack-Request-Timestamp', String(timestamp)],
    ['X-Slack-Signature', `v0=${mac}`],
  ]);
}

const verify = (request: ReturnType<typeof inbound>) => verifier.verify(request, {}, [secrets.current], NOW);

describe('chat verifier (Slack scheme)', () => {
  itBehavesLikeAVerifier({
    verifier,
    settings: {},
    secrets,
    sign: (secret, body, timestamp) => signed(secret, body, timestamp),
    body: EVENT,
    tamperedBody: EVENT.replace('river', 'lake'),
    eventId: 'Ev0PV52K21',
    requiredHeaders: ['X-Slack-Signature', 'X-Slack-Request-Timestamp'],
    onceOnlyHeaders: ['X-Slack-Signature', 'X-Slack-Request-Timestamp'],
    timestamped: true,
  });

  it("verifies the published example of Slack's docs at its own time, and not 5 minutes later", () => {
    const request = inbound(SLACK_DOCS.body, [
      ['Content-Type', 'application/x-www-form-urlencoded'],
      ['X-Slack-Request-Timestamp', String(SLACK_DOCS.timestamp)],
      ['X-Slack-Signature', SLACK_DOCS.signature],
    ]);
    const at = (seconds: number) => new Date(seconds * 1000);
    // A slash command: form-encoded, no event ID, so the caller deduplicates by body.
    expect(verifier.verify(request, {}, [SLACK_DOCS.secret], at(SLACK_DOCS.timestamp))).toEqual({
      ok: true,
      eventId: null,
    });
    expect(verifier.verify(request, {}, [SLACK_DOCS.secret], at(SLACK_DOCS.timestamp + 301))).toEqual(
      reject('stale_timestamp'),
    );
    expect(verifier.verify(request, {}, [secrets.current], at(SLACK_DOCS.timestamp))).toEqual(reject('bad_signature'));
  });

  it('answers a verified url_verification with its challenge, as plain text, without capturing it', () => {
    const challenge = '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P';
    const body = JSON.stringify({ token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl', challenge, type: 'url_verification' });
    expect(verify(signed(secrets.current, body, NOW_SECONDS))).toEqual({
      ok: true,
      eventId: null,
      reply: { status: 200, contentType: 'text/plain; charset=utf-8', body: challenge },
    });
  });

  it('does not answer a challenge that does not verify', () => {
    const body = JSON.stringify({ challenge: 'abc', type: 'url_verification' });
    expect(verify(signed(secrets.unrelated, body, NOW_SECONDS))).toEqual(reject('bad_signature'));
  });

  it('takes interactivity payloads (form-encoded) with no event ID', () => {
    const body = `payload=${encodeURIComponent('{"type":"block_actions","trigger_id":"1.2.3"}')}`;
    expect(verify(signed(secrets.current, body, NOW_SECONDS, 'application/x-www-form-urlencoded'))).toEqual({
      ok: true,
      eventId: null,
    });
  });

  it('takes a JSON event without event_id (app_rate_limited) with no event ID', () => {
    const body = '{"token":"x","type":"app_rate_limited","team_id":"T1","minute_rate_limited":1518467820}';
    expect(verify(signed(secrets.current, body, NOW_SECONDS))).toEqual({ ok: true, eventId: null });
  });

  it.each([
    ['not JSON', '{"type":'],
    ['a JSON array', '[]'],
    ['a url_verification without a challenge', '{"type":"url_verification"}'],
  ])('refuses a verified JSON body that is %s as malformed_body', (_name, body) => {
    expect(verify(signed(secrets.current, body, NOW_SECONDS))).toEqual(reject('malformed_body'));
  });

  it.each([
    ['a v1 signature', { 'X-Slack-Signature': `v1=${'a'.repeat(64)}` }],
    ['a signature that is not hex', { 'X-Slack-Signature': 'v0=xyz' }],
    ['a timestamp in milliseconds with a dot', { 'X-Slack-Request-Timestamp': '1531420618.5' }],
  ])('refuses %s as malformed_signature', (_name, override) => {
    const headers: [string, string][] = [
      ['X-Slack-Request-Timestamp', String(NOW_SECONDS)],
      ['X-Slack-Signature', `v0=${'a'.repeat(64)}`],
    ];
    const merged = headers.map(([name, value]): [string, string] => [
      name,
      (override as Record<string, string>)[name] ?? value,
    ]);
    expect(verify(inbound(EVENT, merged))).toEqual(reject('malformed_signature'));
  });

  it('answers a captured event with an empty 200', () => {
    expect(verifier.accepted('msg_1', false)).toEqual({
      status: 200,
      contentType: 'text/plain; charset=utf-8',
      body: '',
    });
    expect(verifier.accepted('msg_1', true).body).toBe('');
  });
});
