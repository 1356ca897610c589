import type { CreateStreamTokenMutation, EndpointStreamQuery } from '@/gql/graphql';

/** A stream endpoint's stream URL, open connections and tokens (never the tokens themselves). */
export type EndpointStream = EndpointStreamQuery['endpoint'];
export type StreamToken = EndpointStream['streamTokens']['nodes'][number];
export type StreamConnection = EndpointStream['streamConnections'][number];

/** What create answers: the token, shown once and then forgotten (null in an idempotent replay). */
export type StreamTokenReveal = CreateStreamTokenMutation['createStreamToken'];
