/** Where the copied command forwards to: examples/receiver.mjs's port (the console has 3000). */
export const DEFAULT_FORWARD_URL = 'http://localhost:4000/webhooks';
/** What the command shows in place of a token it does not know. */
export const TOKEN_PLACEHOLDER = '<whst_...>';

/**
 * The `npm run listen` command for a stream endpoint, run from a checkout of the service (docs/streams.md): its ID,
 * the token (or a placeholder) and the service's public URL, taken from the endpoint's stream URL.
 */
export function listenCommand(endpointId: string, streamUrl: string | null, token: string | null): string {
  const server = streamUrl?.replace(/\/v1\/endpoints\/[^/]+\/stream$/, '');
  return [
    'npm run listen --',
    `--endpoint ${endpointId}`,
    `--token ${token ?? TOKEN_PLACEHOLDER}`,
    `--forward ${DEFAULT_FORWARD_URL}`,
    ...(server ? [`--server ${server}`] : []),
  ].join(' ');
}
