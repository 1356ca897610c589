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

export function readServerConfig(env: NodeJS.ProcessEnv, mode: RunMode): ServerConfig {
  return {
    ...readCoreConfig(env, mode),
    port: integer(env['PORT'], 8080, 'PORT'),
    host: env['HOST'] ?? (mode === 'local' ? '127.0.0.1' : '0.0.0.0'),
    validateResponses: env['SVC_VALIDATE_RESPONSES'] === '1',
    trustedProxies: addressList(env['SVC_TRUSTED_PROXIES'], 'SVC_TRUSTED_PROXIES'),
  };
}
