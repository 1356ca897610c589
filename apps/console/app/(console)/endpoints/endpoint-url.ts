/**
 * A receiver URL to show: scheme, host and path (http or https matters to whoever reads it). The query often carries a token, so it shows as `?…`; the full URL
 * reaches the browser only on the endpoint's own page, for its edit form.
 */
/** Where an endpoint's deliveries go, as lists and its page show it: its masked URL, or that its receiver connects. */
export function endpointTarget(endpoint: { deliveryMode: 'push' | 'stream'; url: string }): string {
  return endpoint.deliveryMode === 'stream' ? 'stream (the receiver connects)' : maskedUrl(endpoint.url);
}

export function maskedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}${parsed.search ? '?…' : ''}`;
  } catch {
    const queryAt = url.indexOf('?');
    return queryAt === -1 ? url : `${url.slice(0, queryAt)}?…`;
  }
}
