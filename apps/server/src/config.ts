import { isIP } from 'node:net';
import { readCoreConfig, type CoreConfig, type RunMode } from '@svc/core';

/** Configuration is read once at start into this object and passed down; nothing else reads process.env. */
export interface ServerConfig extends CoreConfig {
  port: number;
  host: string;
  /** Tests: check every response against its declared schema and fail loudly on a mismatch. */
  validateResponses: boolean;
  /**
   * SVC_TRUSTED_PROXIES: addresses and CIDR blocks of the proxies in front of the server (the console's server, a
   * load balancer) whose X-Forwarded-For names the client. Empty: the client is the connection's peer.
   */
  trustedProxies: string[];
  /** Tests: the CPU milliseconds GraphQL validation may spend on one document (default DOCUMENT_LIMITS.validationMs). */
  graphqlValidationMs?: number;
  /** Stream endpoints' connections (docs/streams.md, docs/deploying.md). */
  streams: StreamSettings;
}

export interface StreamSettings {
  /** SVC_STREAM_MAX_CONNECTIONS_PER_ENDPOINT: open streams one endpoint may have across every server process. */
  maxConnectionsPerEndpoint: number;
  /** SVC_STREAM_MAX_CONNECTIONS_PER_TEAM: open streams of all a team's endpoints together. */
  maxConnectionsPerTeam: number;
  /** SVC_STREAM_HEARTBEAT_SECONDS: a `: keepalive` comment this often, so proxies keep an idle stream open. */
  heartbeatMs: number;
  /**
   * SVC_STREAM_STALL_SECONDS: a reader that takes none of what was written for this long (its socket buffer stays
   * full) is closed; what it held unacknowledged is offered again.
   */
  stallMs: number;
  /** SVC_STREAM_POLL_SECONDS: the fallback look for due deliveries of the streams a process holds, behind wake-ups. */
  pollMs: number;
  /**
   * SVC_STREAM_ACKS_PER_SECOND: acknowledgements one stream token may send a second to one server process (a burst
   * of twice that, at least 100); past it, 429 rate_limited with Retry-After.
   */
  acksPerSecond: number;
}

/** A comma-separated list of IP addresses and CIDR blocks; anything else stops the start with its name. */
function addressList(value: string | undefined, name: string): string[] {
  const entries = (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const bitsValid = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
    if (family === 0 || extra !== undefined || !bitsValid)
      throw new Error(`${name}: "${entry}" is not an IP address or a CIDR block (such as 10.0.0.0/8)`);
  }
  return entries;
}

function integer(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value)) throw new Error(`${name} must be an integer`);
  return Number(value);
}

function positive(raw: string | undefined, name: string, fallback: number): number {
  const value = integer(raw, fallback, name);
  if (value < 1) throw new Error(`${name} must be at least 1`);
  return value;
}

export function readServerConfig(env: NodeJS.ProcessEnv, mode: RunMode): ServerConfig {
  return {
    ...readCoreConfig(env, mode),
    port: integer(env['PORT'], 8080, 'PORT'),
    host: env['HOST'] ?? (mode === 'local' ? '127.0.0.1' : '0.0.0.0'),
    validateResponses: env['SVC_VALIDATE_RESPONSES'] === '1',
    trustedProxies: addressList(env['SVC_TRUSTED_PROXIES'], 'SVC_TRUSTED_PROXIES'),
    streams: {
      maxConnectionsPerEndpoint: positive(
        env['SVC_STREAM_MAX_CONNECTIONS_PER_ENDPOINT'],
        'SVC_STREAM_MAX_CONNECTIONS_PER_ENDPOINT',
        10,
      ),
      maxConnectionsPerTeam: positive(
        env['SVC_STREAM_MAX_CONNECTIONS_PER_TEAM'],
        'SVC_STREAM_MAX_CONNECTIONS_PER_TEAM',
        100,
      ),
      heartbeatMs: positive(env['SVC_STREAM_HEARTBEAT_SECONDS'], 'SVC_STREAM_HEARTBEAT_SECONDS', 15) * 1000,
      stallMs: positive(env['SVC_STREAM_STALL_SECONDS'], 'SVC_STREAM_STALL_SECONDS', 60) * 1000,
      pollMs: positive(env['SVC_STREAM_POLL_SECONDS'], 'SVC_STREAM_POLL_SECONDS', 5) * 1000,
      acksPerSecond: positive(env['SVC_STREAM_ACKS_PER_SECOND'], 'SVC_STREAM_ACKS_PER_SECOND', 1000),
    },
  };
}
