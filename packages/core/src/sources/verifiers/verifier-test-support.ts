// Shared by the verifier tests: building requests as Node hands them over, and the behaviour every kind must show
// (tampering, wrong and rotated secrets, missing and repeated security headers, the timestamp window).
import { expect, it } from 'vitest';
import { reject, type InboundRequest, type Verifier } from './verifier.js';

export const PUBLIC_URL = 'https://hooks.example.test/receive/rcv_4kT9mQ2xZ7';

/** 2026-10-09T00:00:00Z: the tests' "now", in unix seconds. */
export const NOW_SECONDS = 1_791_504_000;
export const NOW = new Date(NOW_SECONDS * 1000);

export function inbound(
  body: string | Buffer,
  headers: readonly (readonly [string, string])[],
  publicUrl = PUBLIC_URL,
): InboundRequest {
  return {
    rawBody: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
    rawHeaders: headers.flat(),
    publicUrl,
  };
}

/** The request with the header sent once more, with the same value (as a proxy might repeat it). */
export function withRepeatedHeader(request: InboundRequest, name: string): InboundRequest {
  const index = request.rawHeaders.findIndex((value, i) => i % 2 === 0 && value.toLowerCase() === name.toLowerCase());
  if (index < 0) throw new Error(`the request has no ${name} header to repeat`);
  return { ...request, rawHeaders: [...request.rawHeaders, name, request.rawHeaders[index + 1]!] };
}

export function withoutHeader(request: InboundRequest, name: string): InboundRequest {
  const kept: string[] = [];
  for (let i = 0; i + 1 < request.rawHeaders.length; i += 2) {
    if (request.rawHeaders[i]!.toLowerCase() !== name.toLowerCase())
      kept.push(request.rawHeaders[i]!, request.rawHeaders[i + 1]!);
  }
  return { ...request, rawHeaders: kept };
}

export function withBody(request: InboundRequest, body: string | Buffer): InboundRequest {
  return { ...request, rawBody: typeof body === 'string' ? Buffer.from(body, 'utf8') : body };
}

export interface VerifierContract<S> {
  verifier: Verifier<S>;
  settings: S;
  /** Two secrets for a rotation (current, previous) and one the source does not hold. */
  secrets: { current: string; previous: string; unrelated: string };
  /** A request for `body` signed with `secret` by the provider's official library, at `timestamp` where it has one. */
  sign(secret: string, body: Buffer, timestamp: number): InboundRequest | Promise<InboundRequest>;
  body: string;
  /** A body whose bytes differ from `body` in a way the provider signs. */
  tamperedBody: string;
  /** The event ID a verified request of `sign` yields. */
  eventId: string | null;
  /** Headers without which the request is refused as missing_signature. */
  requiredHeaders: readonly string[];
  /** Security headers (signature, timestamp, event ID) that refuse the request when repeated. */
  onceOnlyHeaders: readonly string[];
  /** Whether the scheme signs a timestamp (the 300-second window applies). */
  timestamped: boolean;
  /** Whether the body is covered at all (not for bearer). */
  signsBody?: boolean;
}

/** The behaviour every kind shows; call inside the kind's describe(). */
export function itBehavesLikeAVerifier<S>(contract: VerifierContract<S>): void {
  const { verifier, settings, secrets } = contract;
  const body = Buffer.from(contract.body, 'utf8');
  const verify = (request: InboundRequest, active: readonly string[] = [secrets.current], now = NOW) =>
    verifier.verify(request, settings, active, now);

  it('accepts a request signed by the official library, with its event ID', async () => {
    const request = await contract.sign(secrets.current, body, NOW_SECONDS);
    expect(verify(request)).toEqual({ ok: true, eventId: contract.eventId });
  });

  it('refuses a tampered body', async () => {
    const request = withBody(await contract.sign(secrets.current, body, NOW_SECONDS), contract.tamperedBody);
    if (contract.signsBody === false) expect(verify(request).ok).toBe(true);
    else expect(verify(request)).toEqual(reject('bad_signature'));
  });

  it('refuses a request signed with a secret the source does not hold', async () => {
    const request = await contract.sign(secrets.unrelated, body, NOW_SECONDS);
    expect(verify(request)).toEqual(reject('bad_signature'));
    expect(verify(request, [])).toEqual(reject('bad_signature'));
  });

  it('accepts the old and the new secret during a rotation overlap, and only the listed ones', async () => {
    const byCurrent = await contract.sign(secrets.current, body, NOW_SECONDS);
    const byPrevious = await contract.sign(secrets.previous, body, NOW_SECONDS);
    const overlap = [secrets.current, secrets.previous];
    expect(verify(byCurrent, overlap).ok).toBe(true);
    expect(verify(byPrevious, overlap).ok).toBe(true);
    // After the overlap only the current secret is active.
    expect(verify(byPrevious, [secrets.current])).toEqual(reject('bad_signature'));
    expect(verify(byCurrent, [secrets.previous])).toEqual(reject('bad_signature'));
  });

  it.each(contract.requiredHeaders)('refuses a request without %s as missing_signature', async (name) => {
    const request = withoutHeader(await contract.sign(secrets.current, body, NOW_SECONDS), name);
    expect(verify(request)).toEqual(reject('missing_signature'));
  });

  it.each(contract.onceOnlyHeaders)('refuses a request whose %s header appears twice', async (name) => {
    const request = withRepeatedHeader(await contract.sign(secrets.current, body, NOW_SECONDS), name);
    expect(verify(request)).toEqual(reject('duplicate_header'));
  });

  if (contract.timestamped) {
    it.each([
      ['301 seconds old', -301],
      ['301 seconds ahead', 301],
      ['a day old', -86_400],
    ])('refuses a timestamp %s as stale_timestamp', async (_name, offset) => {
      const request = await contract.sign(secrets.current, body, NOW_SECONDS + offset);
      expect(verify(request)).toEqual(reject('stale_timestamp'));
    });

    it.each([
      ['300 seconds old', -300],
      ['300 seconds ahead', 300],
    ])('accepts a timestamp %s (the edge of the window)', async (_name, offset) => {
      const request = await contract.sign(secrets.current, body, NOW_SECONDS + offset);
      expect(verify(request).ok).toBe(true);
    });
  } else {
    it('has no timestamp: an old request still verifies (deduplication catches replays)', async () => {
      const request = await contract.sign(secrets.current, body, NOW_SECONDS - 86_400);
      expect(verify(request).ok).toBe(true);
    });
  }
}
