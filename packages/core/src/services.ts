import type { DataSource } from 'typeorm';
import type { HotSql } from '@svc/db';
import type { UrlPolicy } from '@svc/egress';
import { AnalyticsService } from './analytics/analytics.service.js';
import { BillingService } from './billing/billing.service.js';
import { UsageService } from './billing/usage.service.js';
import { capabilities, type Capabilities } from './catalog/catalog.js';
import type { Limits } from './catalog/limits.js';
import type { Clock } from './common/clock.js';
import { Sealer } from './common/sealing.js';
import { EndpointService } from './endpoints/endpoint.service.js';
import { EventTypeService } from './event-types/event-type.service.js';
import { IdempotencyService } from './idempotency/idempotency.service.js';
import type { JobQueue } from './jobs/job-queue.js';
import { DispatchService } from './engine/dispatch.service.js';
import { SettlementService } from './engine/settlement.service.js';
import { DispatchOwnershipService } from './engine/dispatch-ownership.service.js';
import { SealingKeyMismatches } from './engine/sealing-key-mismatch.js';
import { AdmissionService, type AdmissionQueueBounds } from './messages/admission.service.js';
import { MessageService } from './messages/message.service.js';
import { MessageRepairService } from './messages/message-repair.service.js';
import { DeliveryService } from './deliveries/delivery.service.js';
import { ReplayService } from './deliveries/replay.service.js';
import { RetentionService } from './retention/retention.service.js';
import { PartitionMaintenance } from './retention/partitions.js';
import { SourceService } from './sources/source.service.js';
import { ReceiveService } from './sources/receive.service.js';
import { OperationalEventService } from './events/operational-event.service.js';
import { Metrics } from './metrics/metrics.js';
import { RateLimitService } from './rate-limits/rate-limit.service.js';
import { ConsoleSessionService } from './sessions/console-session.service.js';
import { PortalSessionService } from './portal/portal-session.service.js';
import { PortalService } from './portal/portal.service.js';
import { SettingsService } from './settings/settings.service.js';
import { AuthService } from './teams/auth.service.js';
import { TeamService } from './teams/team.service.js';
import { TenantService } from './tenants/tenant.service.js';
import { FeatureFlagService } from './feature-flags/feature-flag.service.js';
import { PlatformEventWriter } from './subscriptions/platform-events.js';
import { SubscriptionService } from './subscriptions/subscription.service.js';
import { SubscriptionHistoryService } from './subscriptions/subscription-history.service.js';
import { SubscriptionDispatchService } from './subscriptions/subscription-dispatch.service.js';
import { StreamTokenService } from './streams/stream-tokens.service.js';
import { StreamConnectionService } from './streams/stream-connections.service.js';
import { StreamDeliveryService } from './streams/stream-deliveries.service.js';

export interface CoreOptions {
  db: DataSource;
  /** Plan-cached statements of the hot paths (claim, settle, admission). */
  hot: HotSql;
  clock: Clock;
  limits: Limits;
  serviceId: string;
  region: string;
  /** 32-byte key that seals secrets at rest. */
  sealingKey: Buffer;
  /** Which receiver URLs are acceptable (strict in production; loopback allowed in local mode). */
  urlPolicy: UrlPolicy;
  /** Where services send jobs, inside their own transactions. */
  jobs: JobQueue;
  /** The console's address, for links in chat summaries of platform events (null or absent: no links). */
  consoleUrl?: string | null;
  /** How many admissions (and bytes of bodies) one process holds at once; default ADMISSION_QUEUE_BOUNDS. */
  admissionQueue?: AdmissionQueueBounds;
}

export interface Services {
  readonly db: DataSource;
  readonly hot: HotSql;
  readonly clock: Clock;
  readonly limits: Limits;
  readonly capabilities: Capabilities;
  readonly auth: AuthService;
  readonly teams: TeamService;
  readonly tenants: TenantService;
  readonly eventTypes: EventTypeService;
  readonly settings: SettingsService;
  readonly endpoints: EndpointService;
  readonly idempotency: IdempotencyService;
  readonly rateLimits: RateLimitService;
  readonly billing: BillingService;
  /** Usage by meter per billing month (GET /meta/usage) and the closing of billing months. */
  readonly usage: UsageService;
  readonly consoleSessions: ConsoleSessionService;
  /** Receivers' portal sessions: created by an operator's key for one tenant (docs/portal.md). */
  readonly portalSessions: PortalSessionService;
  /** What a tenant does in the receivers' portal, narrowed to its tenant and recorded as webhooks.portal.* events. */
  readonly portal: PortalService;
  readonly jobs: JobQueue;
  readonly messages: MessageService;
  /** POST /messages and GraphQL publish: admissions of this process coalesced into batches (docs/admission.md). */
  readonly admission: AdmissionService;
  /** Cancel and redact (POST /messages/{id}/cancel, /redact). */
  readonly messageRepair: MessageRepairService;
  /** Deliveries and attempts: lists, dead letters, retry now, replay. */
  readonly deliveries: DeliveryService;
  /** Bulk replays of an endpoint's dead letters (POST /replays), run in batches by the worker. */
  readonly replays: ReplayService;
  /** Retention sweeps (content, response bodies, attempts and messages, redaction completion). */
  readonly retention: RetentionService;
  /** The daily partitions of messages, contents, deliveries and attempts: made ahead, dropped past retention. */
  readonly partitions: PartitionMaintenance;
  /** Sources: the resource and its receive-token lookup. */
  readonly sources: SourceService;
  /** POST /receive/{token}: verify, deduplicate and capture. */
  readonly receive: ReceiveService;
  /** Operational events (GET /events); the engine emits them inside its own transactions. */
  readonly events: OperationalEventService;
  /** The delivery engine's claim and settle sides (the worker drives them). */
  readonly dispatch: DispatchService;
  readonly settlement: SettlementService;
  readonly ownership: DispatchOwnershipService;
  /** Deliveries a claim could not open (secrets sealed with another key): released, counted, and the worker told. */
  readonly keyMismatches: SealingKeyMismatches;
  /** Which receiver URLs and destinations are acceptable (the delivery engine's egress applies it too). */
  readonly urlPolicy: UrlPolicy;
  /** This process's Prometheus metrics. */
  readonly metrics: Metrics;
  /** GET /analytics and the rollup job that keeps its hourly rollups. */
  readonly analytics: AnalyticsService;
  /** The platform API: feature-flag environments and flags (each change writes a platform event). */
  readonly featureFlags: FeatureFlagService;
  /** The platform API: event subscriptions, their secrets and test events. */
  readonly subscriptions: SubscriptionService;
  /** The platform API: deliveries with attempts, manual retries, and the team's events (30 days). */
  readonly subscriptionHistory: SubscriptionHistoryService;
  /** The ordered delivery engine of event subscriptions (the worker drives it). */
  readonly subscriptionDispatch: SubscriptionDispatchService;
  /** Stream endpoints' bearer tokens (docs/streams.md): created, listed and revoked with a team key. */
  readonly streamTokens: StreamTokenService;
  /** Open streams of every server process (a table the holders beat), with what each holds unacknowledged. */
  readonly streamConnections: StreamConnectionService;
  /** What streams are offered, their acknowledgements and the timeouts of what nobody acknowledged. */
  readonly streamDeliveries: StreamDeliveryService;
  /** Readiness: the database answers. */
  ready(): Promise<boolean>;
}

export function createServices(options: CoreOptions): Services {
  const { db, clock, limits } = options;
  const tenants = new TenantService(db, clock, limits);
  const auth = new AuthService(db, clock);
  const billing = new BillingService(clock);
  const events = new OperationalEventService(db, clock);
  const sealer = new Sealer(options.sealingKey);
  const metrics = new Metrics({ db, clock });
  const rateLimits = new RateLimitService(db, clock, limits, metrics);
  const admission = new AdmissionService({
    db,
    clock,
    limits,
    billing,
    metrics,
    ...(options.admissionQueue ? { queueBounds: options.admissionQueue } : {}),
  });
  const messages = new MessageService({ db, clock, admission });
  const sources = new SourceService({ db, clock, limits, sealer });
  const endpoints = new EndpointService({
    db,
    clock,
    limits,
    sealer,
    urlPolicy: options.urlPolicy,
    tenants,
  });
  const platformEvents = new PlatformEventWriter(clock, options.jobs);
  const eventTypes = new EventTypeService(db, clock, limits);
  const deliveries = new DeliveryService({ db, clock, limits, jobs: options.jobs, billing });
  const keyMismatches = new SealingKeyMismatches({ db, clock, events, metrics, workerKeyId: sealer.keyId });
  const settlement = new SettlementService({
    db,
    hot: options.hot,
    clock,
    events,
    consoleUrl: options.consoleUrl ?? null,
  });
  const ownership = new DispatchOwnershipService({ db, clock, events });
  const streamConnections = new StreamConnectionService({ db, clock });
  const streamTokens = new StreamTokenService({ db, hot: options.hot, clock, endpoints });
  return {
    db,
    hot: options.hot,
    clock,
    limits,
    capabilities: capabilities(options.serviceId, options.region, limits),
    auth,
    teams: new TeamService(db, clock, () => auth.forget()),
    tenants,
    eventTypes,
    settings: new SettingsService(db, clock),
    endpoints,
    idempotency: new IdempotencyService(db, clock),
    rateLimits,
    billing,
    usage: new UsageService({ db, clock }),
    consoleSessions: new ConsoleSessionService(db, clock, auth),
    jobs: options.jobs,
    messages,
    admission,
    messageRepair: new MessageRepairService(db, clock),
    deliveries,
    portalSessions: new PortalSessionService({
      db,
      clock,
      tenants,
      eventTypes,
      events,
      consoleUrl: options.consoleUrl ?? null,
    }),
    portal: new PortalService({ db, clock, endpoints, messages, deliveries, events, streamTokens, streamConnections }),
    replays: new ReplayService({ db, clock, limits, jobs: options.jobs, billing, events }),
    retention: new RetentionService(db, clock),
    partitions: new PartitionMaintenance(db, clock),
    sources,
    receive: new ReceiveService({ db, clock, sources, messages, rateLimits, events }),
    events,
    dispatch: new DispatchService({
      db,
      hot: options.hot,
      clock,
      credentials: endpoints.credentials,
      events,
      keyMismatches,
    }),
    keyMismatches,
    settlement,
    ownership,
    streamTokens,
    streamConnections,
    streamDeliveries: new StreamDeliveryService({
      db,
      hot: options.hot,
      clock,
      credentials: endpoints.credentials,
      events,
      settlement,
      ownership,
      connections: streamConnections,
    }),
    metrics,
    analytics: new AnalyticsService({ db, clock, jobs: options.jobs }),
    urlPolicy: options.urlPolicy,
    featureFlags: new FeatureFlagService({ db, clock, events: platformEvents }),
    subscriptions: new SubscriptionService({ db, clock, sealer, urlPolicy: options.urlPolicy, events: platformEvents }),
    subscriptionHistory: new SubscriptionHistoryService({ db, clock, jobs: options.jobs }),
    subscriptionDispatch: new SubscriptionDispatchService({
      db,
      clock,
      sealer,
      jobs: options.jobs,
      consoleUrl: options.consoleUrl ?? null,
    }),
    ready: () =>
      db.query('SELECT 1').then(
        () => true,
        () => false,
      ),
  };
}
