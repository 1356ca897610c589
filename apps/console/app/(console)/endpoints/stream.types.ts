import type { CreateStreamTokenMutation, EndpointStreamQuery } from '@/gql/graphql';

/** A stream endpoint's stream URL, open connections and tokens (never the tokens themselves). */
export type EndpointStream = EndpointStreamQuery['endpoint'];
export type StreamToken = EndpointStream['streamTokens']['nodes'][number];
export type StreamConnection = EndpointStream['streamConnections'][number];

/** What create answers: the token, shown once and then forgotten (null in an idempotent replay). */
export type StreamTokenReveal = CreateStreamTokenMutation['createStreamToken'];

/** Where the copied command forwards to: examples/receiver.mjs's port (the console has 3000). */
export const DEFAULT_FORWARD_URL = 'http://localhost:4000/webhooks';
/** What the command shows in place of a token it does not know. */
export const TOKEN_PLACEHOLDER = '<whst_...>';

/** The `npm run listen` command for a stream endpoint, run from a checkout of the service (docs/streams.md). */
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
