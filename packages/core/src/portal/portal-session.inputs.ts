import { z } from 'zod';
import { HOUR, SECOND } from '../common/clock.js';
import { USD_AMOUNT_PATTERN } from '../catalog/catalog.js';

/** What a portal session may do: read only, or also manage the tenant's endpoints (and retry and replay). */
export const PORTAL_CAPABILITIES = ['read_only', 'manage_endpoints'] as const;
export type PortalCapabilities = (typeof PORTAL_CAPABILITIES)[number];

export const PORTAL_DEFAULT_LIFETIME_S = HOUR / SECOND;
export const PORTAL_MAX_LIFETIME_S = (7 * 24 * HOUR) / SECOND;
export const MAX_PORTAL_EVENT_TYPES = 100;
export const MAX_PORTAL_FRAME_ORIGINS = 20;

const HEX_COLOUR = /^#[0-9a-fA-F]{6}$/;

/** An https URL a browser may load (no user information); the portal shows it as the logo. */
const httpsUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' && url.username === '' && url.password === '' && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an https URL');

const usd = z
  .string()
  .regex(USD_AMOUNT_PATTERN, 'must be a decimal USD amount like "5" or "0.25" (at most 6 decimals)');

export const PortalBrandingInput = z.strictObject({
  display_name: z.string().trim().min(1).max(64).nullable().default(null),
  accent_color: z
    .string()
    .regex(HEX_COLOUR, 'must be a colour like #1c7ed6')
    .transform((value) => value.toLowerCase())
    .nullable()
    .default(null),
  logo_url: httpsUrl.nullable().default(null),
});

/** POST /tenants/{id}/portal_sessions (an extension, docs/portal.md). */
export const CreatePortalSessionInput = z.strictObject({
  expires_in_seconds: z
    .number()
    .int()
    .min(60, 'at least 60 seconds')
    .max(PORTAL_MAX_LIFETIME_S, `at most ${PORTAL_MAX_LIFETIME_S} seconds (7 days)`)
    .default(PORTAL_DEFAULT_LIFETIME_S),
  capabilities: z.enum(PORTAL_CAPABILITIES, { message: 'must be read_only or manage_endpoints' }).default('read_only'),
  event_types: z
    .array(z.string().min(1).max(256))
    .max(MAX_PORTAL_EVENT_TYPES, `at most ${MAX_PORTAL_EVENT_TYPES} event types`)
    .refine((list) => new Set(list).size === list.length, 'event types must not repeat')
    .meta({ uniqueItems: true })
    .nullable()
    .default(null),
  branding: PortalBrandingInput.default({ display_name: null, accent_color: null, logo_url: null }),
  spending_cap_usd: usd.default('0'),
});
export type CreatePortalSessionInput = z.output<typeof CreatePortalSessionInput>;

/**
 * An origin as `new URL(x).origin` writes it: http or https, a lowercase host (a name, an IPv4 address or a
 * bracketed IPv6 one), a port other than the scheme's default.
 */
const ORIGIN_PATTERN =
  /^(?:https:\/\/(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?|\[[0-9a-f:.]+\])(?::(?!443$)[1-9][0-9]{0,4})?|http:\/\/(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?|\[[0-9a-f:.]+\])(?::(?!80$)[1-9][0-9]{0,4})?)$/;

/** An origin a page framing the portal may have: scheme, host and port only. */
const frameOrigin = z
  .string()
  .max(256)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
    } catch {
      return false;
    }
  }, 'must be an origin like https://app.example.com (scheme, host and port; no path)')
  // For the API description: what URL.origin writes (lowercase, no default port, no path).
  .meta({ pattern: ORIGIN_PATTERN.source });

/** The team setting portal_frame_origins (PATCH /settings, an extension). */
export const PortalFrameOrigins = z
  .array(frameOrigin)
  .max(MAX_PORTAL_FRAME_ORIGINS, `at most ${MAX_PORTAL_FRAME_ORIGINS} origins`)
  .refine((list) => new Set(list).size === list.length, 'origins must not repeat')
  .meta({ uniqueItems: true });

/** `GET /tenants/{id}/portal_sessions`: a page and nothing else (an unknown parameter is 422 like on every list). */
export const ListPortalSessionsQuery = z.strictObject({
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListPortalSessionsQuery = z.output<typeof ListPortalSessionsQuery>;
