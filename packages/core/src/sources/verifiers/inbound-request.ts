import { decodeUtf8Strict, parseStrict, toValue } from '@svc/json';
import type { InboundRequest, RejectReason } from './verifier.js';

/** Every value of one header, in the order received; names match case-insensitively. */
export function headerValues(request: InboundRequest, name: string): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (let i = 0; i + 1 < request.rawHeaders.length; i += 2) {
    if (request.rawHeaders[i]!.toLowerCase() === wanted) values.push(request.rawHeaders[i + 1]!);
  }
  return values;
}

export type SecurityHeaders<N extends readonly (string | null)[]> =
  | { ok: true; values: { [I in keyof N]: string | undefined } }
  | { ok: false; reason: Extract<RejectReason, 'duplicate_header'> };

/**
 * The security headers a scheme reads, each at most once: a repeated one refuses the whole request. An empty value
 * reads as absent, and so does a null name (a header the settings leave out). Every name is checked before any is
 * used, so a duplicate is found whatever else is wrong.
 */
export function securityHeaders<const N extends readonly (string | null)[]>(
  request: InboundRequest,
  names: N,
): SecurityHeaders<N> {
  const values: (string | undefined)[] = [];
  for (const name of names) {
    const found = name === null ? [] : headerValues(request, name);
    if (found.length > 1) return { ok: false, reason: 'duplicate_header' };
    values.push(found[0] === '' ? undefined : found[0]);
  }
  return { ok: true, values: values as { [I in keyof N]: string | undefined } };
}

/**
 * The media type of the request, lower-cased without parameters ("application/json"), or null. Like Node, the first
 * Content-Type counts when there are several; Content-Type is not a security header.
 */
export function mediaType(request: InboundRequest): string | null {
  const value = headerValues(request, 'content-type')[0];
  if (value === undefined) return null;
  const type = value.split(';', 1)[0]!.trim().toLowerCase();
  return type === '' ? null : type;
}

/**
 * The body as a JSON object, or null when it is not one. Parsed strictly, as captured bodies are (messages/
 * message-body.ts): invalid UTF-8 and duplicate keys fail, so the event ID read here is the only one the body has.
 */
export function jsonObjectBody(request: InboundRequest): Record<string, unknown> | null {
  try {
    const value = toValue(parseStrict(decodeUtf8Strict(request.rawBody)));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
