import { parseStrict, minify, type JsonNode } from '@svc/json';
import { CONTENT_TYPES } from '../catalog/catalog.js';
import { ServiceError, invalidField } from '../common/errors.js';
import type { RawJson } from '../common/raw-json.js';
import type { CreateMessageInput } from './message.inputs.js';

export const MAX_BODY_BYTES = 1_048_576;
const TEXTUAL = new Set(['application/json', 'text/plain', 'application/x-www-form-urlencoded']);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The accepted body: its exact bytes and, for JSON, the parsed tree filters and transforms read. */
export interface MessageBody {
  bytes: Buffer;
  /** As stored and sent: the type, with `; charset=utf-8` when the caller gave it on a textual type. */
  contentType: string;
  /** A JSON body's source text and its tree (spans into `text`); transforms copy minified spans of it. */
  json: { text: string; root: JsonNode } | null;
}

/** `type` or `type; charset=utf-8` of the four accepted types; 422 invalid_field otherwise. */
export function normalizeContentType(value: string): { type: string; header: string } {
  const [type = '', ...params] = value.split(';').map((part) => part.trim());
  const lower = type.toLowerCase();
  if (!(CONTENT_TYPES as readonly string[]).includes(lower))
    throw invalidField('content_type', `content_type must be one of ${CONTENT_TYPES.join(', ')}`);
  if (params.length === 0) return { type: lower, header: lower };
  const charset = params.length === 1 && /^charset="?utf-8"?$/i.test(params[0] ?? '');
  if (!charset || !TEXTUAL.has(lower))
    throw invalidField('content_type', 'only textual types may add a parameter, and only ; charset=utf-8');
  return { type: lower, header: `${lower}; charset=utf-8` };
}

function jsonBody(raw: RawJson | null): MessageBody {
  // The payload is parsed once here: the tree gives the minified bytes (whitespace outside strings removed,
  // everything else as sent) and is what filters and transforms read.
  const text = raw === null ? 'null' : raw.text;
  const root = parseStrict(text);
  const bytes = Buffer.from(minify(text, root), 'utf8');
  if (bytes.length > MAX_BODY_BYTES) throw new ServiceError('body_too_large', 'payload is over 1 MiB');
  return { bytes, contentType: 'application/json', json: { text, root } };
}

/** Exactly one of payload and body_base64; the content type rules; 1 MiB after decoding. */
export function acceptBody(input: CreateMessageInput): MessageBody {
  const hasPayload = input.payload !== undefined;
  const hasBase64 = input.body_base64 !== undefined;
  if (hasPayload === hasBase64)
    throw invalidField(hasPayload ? 'body_base64' : 'payload', 'send exactly one of payload and body_base64');
  if (hasPayload) {
    if (input.content_type !== undefined) {
      const { type, header } = normalizeContentType(input.content_type);
      if (type !== 'application/json')
        throw invalidField('content_type', 'payload is JSON: content_type must be application/json');
      return { ...jsonBody(input.payload ?? null), contentType: header };
    }
    return jsonBody(input.payload ?? null);
  }
  if (input.content_type === undefined) throw invalidField('content_type', 'body_base64 needs content_type');
  const { type, header } = normalizeContentType(input.content_type);
  const encoded = input.body_base64!;
  if (!BASE64.test(encoded)) throw invalidField('body_base64', 'body_base64 must be standard padded Base64');
  if ((encoded.length / 4) * 3 > MAX_BODY_BYTES + 2)
    throw new ServiceError('body_too_large', 'body_base64 decodes to over 1 MiB');
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length > MAX_BODY_BYTES) throw new ServiceError('body_too_large', 'body_base64 decodes to over 1 MiB');
  if (type !== 'application/json') return { bytes, contentType: header, json: null };
  // A JSON body sent as Base64 is still checked and matched like a payload, but its bytes are kept as sent.
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalidField('body_base64', 'an application/json body must be UTF-8');
  }
  try {
    return { bytes, contentType: header, json: { text, root: parseStrict(text) } };
  } catch {
    throw invalidField('body_base64', 'an application/json body must be valid JSON');
  }
}

/**
 * A body captured by a source, kept as its exact bytes. The content type must be one of the accepted types (a
 * charset parameter is kept only as `; charset=utf-8`, other parameters are dropped); a JSON body is parsed for
 * filters, transforms and event_type_path, and one that does not parse is kept as opaque bytes.
 */
export function capturedBody(bytes: Buffer, contentTypeHeader: string | undefined): MessageBody {
  if (bytes.length > MAX_BODY_BYTES) throw new ServiceError('body_too_large', 'the request body is over 1 MiB');
  const [type = '', ...params] = (contentTypeHeader ?? 'application/octet-stream').split(';').map((p) => p.trim());
  const lower = type.toLowerCase();
  if (!(CONTENT_TYPES as readonly string[]).includes(lower))
    throw new ServiceError('unsupported_media_type', `content type ${lower || '(none)'} cannot be captured`);
  const utf8 = params.some((p) => /^charset="?utf-8"?$/i.test(p));
  const contentType = utf8 && TEXTUAL.has(lower) ? `${lower}; charset=utf-8` : lower;
  if (lower !== 'application/json') return { bytes, contentType, json: null };
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return { bytes, contentType, json: { text, root: parseStrict(text) } };
  } catch {
    return { bytes, contentType, json: null };
  }
}
