import { graphql } from '@/gql';

const PortalFrameQuery = graphql(`
  query PortalFrame {
    portalContext {
      frameOrigins
    }
  }
`);

/**
 * The origins allowed to frame the receivers' portal come from the operator's team setting portal_frame_origins,
 * read with the portal session (proxy.ts asks the API once per page, kept for a few seconds per session).
 */
const FRAME_ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/;
const CACHE_MS = 10_000;
const cache = new Map<string, { origins: string[]; until: number }>();

/** The CSP frame-ancestors value: exactly the allowed origins, or 'none'. */
export function frameAncestors(origins: readonly string[]): string {
  const safe = origins.filter((origin) => FRAME_ORIGIN.test(origin));
  return safe.length === 0 ? `'none'` : safe.join(' ');
}

/** The frame origins of a live portal session; none for an ended one or when the API cannot be asked. */
export async function portalFrameOrigins(graphqlUrl: string, token: string): Promise<string[]> {
  const now = Date.now();
  const cached = cache.get(token);
  if (cached && cached.until > now) return cached.origins;
  let origins: string[] = [];
  try {
    const response = await fetch(graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: PortalFrameQuery.toString() }),
      cache: 'no-store',
      signal: AbortSignal.timeout(5_000),
    });
    const body = (await response.json()) as { data?: { portalContext?: { frameOrigins?: unknown } } };
    const found = body.data?.portalContext?.frameOrigins;
    if (Array.isArray(found)) origins = found.filter((origin): origin is string => typeof origin === 'string');
  } catch {
    origins = [];
  }
  if (cache.size > 1000) cache.clear();
  cache.set(token, { origins, until: now + CACHE_MS });
  return origins;
}
