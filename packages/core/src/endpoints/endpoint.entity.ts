import { Column, Entity, PrimaryColumn } from 'typeorm';

export type EndpointStatus = 'enabled' | 'paused' | 'disabled';
/** How deliveries are signed: `v1` HMAC with a shared secret, or `v1a` ed25519 with a public key for receivers. */
export type SignatureScheme = 'hmac' | 'ed25519';
export type CircuitState = 'closed' | 'half_open' | 'open';
/** `ordered`: one delivery at a time, in admission (commit) order (docs/delivery.md, "Ordered endpoints"). */
export type EndpointOrdering = 'none' | 'ordered';
/** What a delivery that ends without success does to an ordered endpoint: the next goes, or the endpoint pauses. */
export type OrderingOnFailure = 'continue' | 'hold';
/** `push`: the engine POSTs each delivery to `url`; `stream`: no URL, the receiver fetches them (docs/streams.md). */
export type DeliveryMode = 'push' | 'stream';

/**
 * The configuration row. Health (circuit, failures, probes) is in `endpoint_health` and the queued count in
 * `endpoint_queue_counts`, both written by the delivery engine with plain SQL (endpoint-state.ts reads them).
 */
@Entity({ name: 'endpoints' })
export class EndpointEntity {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ type: 'text', name: 'team_id' }) teamId!: string;
  @Column({ type: 'text', name: 'tenant_id' }) tenantId!: string;
  /** Set on create only. A stream endpoint's url and url_host are empty: the receiver connects to us. */
  @Column({ type: 'text', name: 'delivery_mode' }) deliveryMode!: DeliveryMode;
  /** The URL exactly as given; its query is treated as a secret and never logged. */
  @Column({ type: 'text' }) url!: string;
  @Column({ type: 'text', name: 'url_host' }) urlHost!: string;
  @Column({ type: 'bigint', name: 'url_revision' }) urlRevision!: string;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text' }) description!: string;
  @Column({ type: 'jsonb' }) events!: string[];
  /** Filter and transform as the exact JSON text the operator wrote. */
  @Column({ type: 'text', nullable: true }) filter!: string | null;
  @Column({ type: 'text', nullable: true }) transform!: string | null;
  @Column({ type: 'bigint', name: 'transform_version' }) transformVersion!: string;
  @Column({ type: 'text' }) status!: EndpointStatus;
  @Column({ type: 'text', name: 'disabled_reason', nullable: true }) disabledReason!: string | null;
  @Column({ type: 'integer', name: 'rate_per_second' }) ratePerSecond!: number;
  @Column({ type: 'integer', name: 'max_concurrency' }) maxConcurrency!: number;
  @Column({ type: 'text' }) ordering!: EndpointOrdering;
  @Column({ type: 'text', name: 'ordering_on_failure' }) orderingOnFailure!: OrderingOnFailure;
  @Column({ type: 'jsonb', name: 'retry_delays_seconds' }) retryDelaysSeconds!: number[];
  @Column({ type: 'integer', name: 'timeout_seconds' }) timeoutSeconds!: number;
  @Column({ type: 'jsonb', name: 'header_names' }) headerNames!: string[];
  @Column({ type: 'bytea', name: 'headers_sealed', nullable: true }) headersSealed!: Buffer | null;
  @Column({ type: 'bytea', name: 'authorization_sealed', nullable: true }) authorizationSealed!: Buffer | null;
  @Column({ type: 'jsonb' }) metadata!: Record<string, string>;
  @Column({ type: 'integer', name: 'secret_version' }) secretVersion!: number;
  @Column({ type: 'timestamptz', name: 'old_secret_expires_at', nullable: true }) oldSecretExpiresAt!: Date | null;
  /** The scheme of the current secret version. */
  @Column({ type: 'text', name: 'signature_scheme' }) signatureScheme!: SignatureScheme;
  /** The current `whpk_` public key for ed25519, else null. */
  @Column({ type: 'text', name: 'public_key', nullable: true }) publicKey!: string | null;
  /** The `whpk_` public key of the ed25519 secret in its overlap (until oldSecretExpiresAt), else null. */
  @Column({ type: 'text', name: 'old_public_key', nullable: true }) oldPublicKey!: string | null;
  @Column({ type: 'bigint' }) version!: string;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt!: Date;
  @Column({ type: 'timestamptz', name: 'deleted_at', nullable: true }) deletedAt!: Date | null;
}

@Entity({ name: 'endpoint_secrets' })
export class EndpointSecretEntity {
  @PrimaryColumn({ type: 'text', name: 'endpoint_id' }) endpointId!: string;
  @PrimaryColumn({ type: 'integer', name: 'secret_version' }) secretVersion!: number;
  @Column({ type: 'bytea', name: 'secret_sealed' }) secretSealed!: Buffer;
  @Column({ type: 'text', name: 'created_by_key_id' }) createdByKeyId!: string;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  /** null while current; else the end of its rotation overlap. */
  @Column({ type: 'timestamptz', name: 'expires_at', nullable: true }) expiresAt!: Date | null;
}
