import { createHash } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { ServiceError, type Clock, type Services } from '@svc/core';

/** A token bucket's refill rate (tokens per second) and size. */
export interface BucketSpec {
  rate: number;
  burst: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets in this process's memory, keyed by a string (a source address, a token's hash). At most `maxKeys`
 * are kept: the least recently used is forgotten first, so a client with very many addresses costs a bounded amount
 * of memory (and meets the installation-wide ceiling behind these buckets instead).
 */
export class MemoryBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly spec: BucketSpec,
    private readonly clock: Clock,
    private readonly maxKeys = 10_000,
  ) {}

  /**
   * Takes `count` tokens (one by default; a stream's acknowledgement batch takes one per acknowledgement) of `key`'s
   * bucket, or refuses with 429 rate_limited and the seconds until there are that many.
   */
  take(key: string, count = 1): void {
    const refusal = this.refusal(key, count);
    if (refusal) throw refusal;
    this.bucketOf(key).tokens -= count;
  }

  /** The refusal a take of `count` tokens of `key` would meet now (429 rate_limited with Retry-After), or null. */
  refusal(key: string, count = 1): ServiceError | null {
    const bucket = this.bucketOf(key);
    if (bucket.tokens >= count) return null;
    return new ServiceError('rate_limited', 'too many requests; retry after the time in Retry-After', {
      retryAfter: Math.max(1, Math.ceil((count - bucket.tokens) / this.spec.rate)),
    });
  }

  /** Spends a token of `key` if one is left (for work already done: it refuses nothing). */
  spend(key: string): void {
    const bucket = this.bucketOf(key);
    bucket.tokens = Math.max(0, bucket.tokens - 1);
  }

  /** `key`'s bucket refilled to now, as the most recently used one. */
  private bucketOf(key: string): Bucket {
    const now = this.clock.now().getTime();
    const bucket = this.buckets.get(key) ?? { tokens: this.spec.burst, at: now };
    // Most recently used last: re-inserting moves the key to the end of the map's order.
    this.buckets.delete(key);
    bucket.tokens = Math.min(this.spec.burst, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * this.spec.rate);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    return bucket;
  }
}

/**
 * The key of a source address's bucket: an IPv4 address (IPv4-mapped IPv6 included) as it is, an IPv6 address by
 * its /64 prefix, the block one subscriber is given, so a client cannot take a fresh bucket per address of its block.
 */
export function addressBucketKey(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  const bare = address.replace(/%.*$/, '');
  if (!isIPv6(bare)) return address;
  const [head = '', tail] = bare.toLowerCase().split('::');
  // Groups as written; an IPv4 tail (64:ff9b::1.2.3.4) stands for the last two.
  const groups = (part: string) =>
    part === '' ? [] : part.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group]));
  const before = groups(head);
  const after = tail === undefined ? [] : groups(tail);
  const full = [...before, ...Array<string>(8 - before.length - after.length).fill('0'), ...after];
  return `${full
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}

/** One public action's limits: per source address and per credential in memory, then installation-wide. */
interface PublicActionLimits {
  perAddress: BucketSpec;
  perCredential: BucketSpec;
  /** Shared by every server process (Postgres), far above what one address may do. */
  installation: { bucket: string; spec: BucketSpec };
}

/**
 * The limits of the public GraphQL mutations, whose credential is their input (docs/api-choices.md, "Public
 * mutations"): console sign-in trades a secret key, opening a portal link trades a one-time link token.
 */
export const PUBLIC_LIMITS = {
  signIn: {
    perAddress: { rate: 1, burst: 30 },
    perCredential: { rate: 1, burst: 30 },
    installation: { bucket: 'console_sign_in', spec: { rate: 100, burst: 500 } },
  },
  portalOpen: {
    perAddress: { rate: 2, burst: 20 },
    perCredential: { rate: 1, burst: 5 },
    installation: { bucket: 'portal_open', spec: { rate: 100, burst: 500 } },
  },
} as const satisfies Record<string, PublicActionLimits>;

export type PublicAction = keyof typeof PUBLIC_LIMITS;

/**
 * GraphQL work no team pays for, per client address: documents refused before authentication (their limits, syntax,
 * validation, operation limits) and operations of public fields only (introspection, sign-in, portal links).
 */
export const UNAUTHENTICATED_GRAPHQL: BucketSpec = { rate: 10, burst: 100 };

/** The owner of the installation-wide buckets in rate_limit_buckets (no team has this ID). */
const INSTALLATION = '*installation';

/**
 * Spends the tokens of one public action, cheapest first, so that one client cannot stop everyone's: the source
 * address's bucket, then the credential's (its SHA-256; the credential itself is never kept), both in this process's
 * memory, then the installation's in Postgres. The caller refuses a malformed credential before any of them.
 */
export class PublicLimits {
  private readonly buckets: Record<PublicAction, { address: MemoryBuckets; credential: MemoryBuckets }>;
  private readonly graphql: MemoryBuckets;

  constructor(private readonly services: Pick<Services, 'clock' | 'rateLimits'>) {
    this.graphql = new MemoryBuckets(UNAUTHENTICATED_GRAPHQL, services.clock);
    const make = (limits: PublicActionLimits) => ({
      address: new MemoryBuckets(limits.perAddress, services.clock),
      credential: new MemoryBuckets(limits.perCredential, services.clock),
    });
    this.buckets = { signIn: make(PUBLIC_LIMITS.signIn), portalOpen: make(PUBLIC_LIMITS.portalOpen) };
  }

  async take(action: PublicAction, clientAddress: string, credential: string): Promise<void> {
    const buckets = this.buckets[action];
    buckets.address.take(addressBucketKey(clientAddress));
    buckets.credential.take(createHash('sha256').update(credential).digest('base64url'));
    const { bucket, spec } = PUBLIC_LIMITS[action].installation;
    await this.services.rateLimits.take(INSTALLATION, bucket, spec);
  }

  /** Whether the address has spent its unauthenticated GraphQL work: the refusal (429) it meets, or null. */
  unauthenticatedGraphqlRefusal(clientAddress: string): ServiceError | null {
    return this.graphql.refusal(addressBucketKey(clientAddress));
  }

  /** Counts a GraphQL request no team paid for against its address (after the work: it refuses nothing). */
  chargeUnauthenticatedGraphql(clientAddress: string): void {
    this.graphql.spend(addressBucketKey(clientAddress));
  }
}
