/**
 * `npm run listen -- --endpoint <id> --token <whst_...> --forward <url> [--server <url>]`: receives a stream
 * endpoint's deliveries (docs/streams.md) and forwards each to a local URL with its headers and exact bytes,
 * acknowledging it with the local answer's status. One line per delivery; Ctrl-C stops it (exit 0).
 */
import { parseArgs } from 'node:util';
import { listen, SvcApiError, type ConnectionEvent, type DeliveryOutcome } from '../packages/client/src/index.js';

const USAGE =
  'usage: npm run listen -- --endpoint <wde_...> --token <whst_...> --forward <http://localhost:3000/hooks> ' +
  '[--server <http://127.0.0.1:8080>]\n' +
  '  --token defaults to $SVC_STREAM_TOKEN; --server to http://127.0.0.1:$PORT (PORT default 8080).';

class UsageError extends Error {}

interface Arguments {
  endpoint: string;
  token: string;
  forward: string;
  server: string;
}

function readArguments(argv: string[], env: NodeJS.ProcessEnv): Arguments {
  const { values } = parseArgs({
    args: argv,
    options: {
      endpoint: { type: 'string' },
      token: { type: 'string' },
      forward: { type: 'string' },
      server: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) throw new UsageError('');
  const token = values.token ?? env['SVC_STREAM_TOKEN'];
  if (!values.endpoint) throw new UsageError('--endpoint is required');
  if (!token) throw new UsageError('--token (or SVC_STREAM_TOKEN) is required');
  if (!token.startsWith('whst_')) throw new UsageError('--token must be a stream token (whst_...), not a team key');
  if (!values.forward) throw new UsageError('--forward is required');
  for (const [name, value] of [
    ['--forward', values.forward],
    ['--server', values.server],
  ] as const) {
    if (value !== undefined && !/^https?:\/\/[^/]/.test(value))
      throw new UsageError(`${name} must be an http:// or https:// URL`);
  }
  const server = (values.server ?? `http://127.0.0.1:${env['PORT'] || 8080}`).replace(/\/+$/, '').replace(/\/v1$/, '');
  return { endpoint: values.endpoint, token, forward: values.forward, server };
}

function deliveryLine({ delivery, status, error, receivedAt, latencyMs }: DeliveryOutcome): string {
  const shown = status === 'error' ? `error (${error ?? 'no answer'})` : String(status);
  return [
    receivedAt.toISOString(),
    delivery.eventType,
    delivery.deliveryId,
    `attempt ${delivery.attempt}`,
    `-> ${shown}`,
    `${Math.round(latencyMs)} ms`,
  ].join('  ');
}

/** A refusal, in one line a developer can act on. */
function refusalLine(error: SvcApiError, args: Arguments): string {
  if (error.status === 401)
    return (
      `the stream token was refused for endpoint ${args.endpoint} (401 ${error.code}): check --token and --endpoint ` +
      '(a token opens only its own endpoint; a revoked one none)'
    );
  if (error.status === 404)
    return `no stream endpoint ${args.endpoint} at ${args.server} (404 ${error.code}): check --endpoint`;
  return `the service refused the stream (${error.status} ${error.code}): ${error.message}`;
}

async function main(): Promise<number> {
  let args: Arguments;
  try {
    args = readArguments(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError || (error instanceof Error && 'code' in error))) throw error;
    if (error.message) process.stderr.write(`listen: ${error.message}\n`);
    process.stderr.write(`${USAGE}\n`);
    return error.message ? 2 : 0;
  }

  const stop = new AbortController();
  let stoppedByUser = false;
  const onSignal = () => {
    stoppedByUser = true;
    stop.abort();
  };
  // `on`, not `once`: a terminal's Ctrl-C reaches the whole process group, and a second SIGINT (a second Ctrl-C) must
  // not kill the process while it acknowledges. `npm run listen` runs this file in one Node process (tsx as a loader,
  // not the tsx CLI): the CLI relays a signal to its child and, when the child does not say in time that it handles
  // it, exits 130 itself, which a loaded machine made happen (the e2e test saw 130 for a Ctrl-C).
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let connected = false;
  let unreachable: string | undefined;
  const onConnection = (event: ConnectionEvent) => {
    if (event.type === 'connected') {
      connected = true;
      const resumed = event.resumedFrom ? ' (again: what was not acknowledged comes again)' : '';
      process.stdout.write(`connected to ${args.server}, forwarding to ${args.forward}${resumed}\n`);
    } else if (event.type === 'disconnected') {
      // The first connection decides whether the service is there at all; later losses are waited out.
      if (!connected) {
        unreachable = event.reason;
        stop.abort();
        return;
      }
      process.stdout.write(
        `connection lost (${event.reason}); reconnecting in ${(event.retryInMs / 1000).toFixed(1)} s\n`,
      );
    } else if (event.type === 'ack-error') process.stdout.write(`acknowledgement not sent: ${event.message}\n`);
    else if (event.result !== 'settled')
      process.stdout.write(`acknowledgement of ${event.deliveryId} was ${event.result} (not settled by it)\n`);
  };

  try {
    await listen({
      baseUrl: `${args.server}/v1`,
      endpointId: args.endpoint,
      token: args.token,
      forward: args.forward,
      signal: stop.signal,
      onConnection,
      onDelivery: (outcome) => process.stdout.write(`${deliveryLine(outcome)}\n`),
    });
  } catch (error) {
    if (!(error instanceof SvcApiError)) throw error;
    process.stderr.write(`listen: ${refusalLine(error, args)}\n`);
    return 1;
  }
  if (unreachable !== undefined && !stoppedByUser) {
    process.stderr.write(`listen: cannot reach the service at ${args.server}: ${unreachable}\n`);
    return 1;
  }
  process.stdout.write('stopped\n');
  return 0;
}

process.exitCode = await main();
