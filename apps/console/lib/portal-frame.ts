import { graphql } from '@/gql';

const PortalFrameQuery = graphql(`
  query PortalFrame {
    portalContext {
      frameOrigins
    }
  }
`);

const PortalLinkFrameQuery = graphql(`
  query PortalLinkFrame($linkToken: String!) {
    portalLink(linkToken: $linkToken) {
      frameOrigins
    }
  }
`);

/**
 * The origins allowed to frame the receivers' portal come from the operator's team setting portal_frame_origins,
 * read with the portal session, or with the one-time link on the link's own page, before there is a session
 * (proxy.ts asks the API once per page, kept for a few seconds per token).
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
export function portalFrameOrigins(graphqlUrl: string, token: string): Promise<string[]> {
  return cachedOrigins(token, async () => {
    const body = await askApi(graphqlUrl, { query: PortalFrameQuery.toString() }, token);
    return (body as { data?: { portalContext?: { frameOrigins?: unknown } } }).data?.portalContext?.frameOrigins;
  });
}

/** The frame origins of a one-time link's page (asking does not use the link); none for a link that no longer opens. */
export function portalLinkFrameOrigins(graphqlUrl: string, linkToken: string): Promise<string[]> {
  return cachedOrigins(linkToken, async () => {
    const body = await askApi(graphqlUrl, { query: PortalLinkFrameQuery.toString(), variables: { linkToken } }, null);
    return (body as { data?: { portalLink?: { frameOrigins?: unknown } } }).data?.portalLink?.frameOrigins;
  });
}

async function askApi(graphqlUrl: string, request: unknown, bearer: string | null): Promise<unknown> {
  const response = await fetch(graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify(request),
    cache: 'no-store',
    signal: AbortSignal.timeout(5_000),
  });
  return response.json();
}

async function cachedOrigins(token: string, read: () => Promise<unknown>): Promise<string[]> {
  const now = Date.now();
  const cached = cache.get(token);
  if (cached && cached.until > now) return cached.origins;
  let origins: string[] = [];
  try {
    const found = await read();
    if (Array.isArray(found)) origins = found.filter((origin): origin is string => typeof origin === 'string');
  } catch {
    origins = [];
  }
  if (cache.size > 1000) cache.clear();
  cache.set(token, { origins, until: now + CACHE_MS });
  return origins;
}
