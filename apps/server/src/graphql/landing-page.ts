import type { ApolloServerPlugin } from '@apollo/server';
import { printSchema, type GraphQLSchema } from 'graphql';
import { OPERATION_LIMITS } from './operation-limits.js';

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * What a browser gets at GET /graphql: how to call the API, and the schema. One self-contained page (inline
 * style, no script, nothing loaded from another host), so it works offline, unlike Apollo's CDN-hosted sandbox.
 */
export function landingPageHtml(schema: GraphQLSchema, graphqlUrl: string): string {
  const example = `curl ${graphqlUrl} \\
  -H 'Content-Type: application/json' \\
  -H 'Authorization: Bearer svc_sk_...' \\
  -d '{"query": "{ viewer { teamId teamName } }"}'`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphQL API</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1b1f24; }
pre { background: #f4f5f7; padding: 0.75rem 1rem; overflow-x: auto; font-size: 13px; }
code { background: #f4f5f7; padding: 0 0.2rem; }
</style>
</head>
<body>
<h1>GraphQL API</h1>
<p>Send <code>POST /graphql</code> with a JSON body <code>{"query": "...", "variables": {...}}</code> and the
header <code>Authorization: Bearer svc_sk_...</code> (a secret key) or a console session token. Queries may also
be sent as <code>GET /graphql?query=...</code>.</p>
<pre>${escapeHtml(example)}</pre>
<h2>Rules</h2>
<ul>
<li>Errors carry <code>extensions.code</code>, the same codes as the REST API.</li>
<li>Each root field costs one rate-limit token: mutations from the configuration-write bucket, queries from the
read bucket. An operation may have at most ${OPERATION_LIMITS.rootFields} root fields,
${OPERATION_LIMITS.aliases} aliases and ${OPERATION_LIMITS.depth} levels of nesting.</li>
<li>Mutations that create or rotate take an optional <code>idempotencyKey</code>; a retry with the same key
returns the first answer.</li>
<li>No query returns a secret; <code>createEndpoint</code> and <code>rotateEndpointSecret</code> show a new signing
secret once.</li>
</ul>
<p>Jump to <a href="#schema">the schema</a>. It is also in the repository as <code>docs/schema.graphql</code>
(<code>npm run graphql:schema</code> prints it) and available by introspection.</p>
<h2 id="schema">Schema</h2>
<pre>${escapeHtml(printSchema(schema))}</pre>
</body>
</html>
`;
}

/** Serves `landingPageHtml` to browsers (GET with Accept: text/html) in place of Apollo's default page. */
export function landingPagePlugin(schema: GraphQLSchema, graphqlUrl: string): ApolloServerPlugin {
  const html = landingPageHtml(schema, graphqlUrl);
  return {
    async serverWillStart() {
      return {
        async renderLandingPage() {
          return { html };
        },
      };
    },
  };
}
