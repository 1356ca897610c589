import 'reflect-metadata';

export * from './common/errors.js';
export * from './common/clock.js';
export * from './common/ids.js';
export * from './common/paging.js';
export * from './common/etag.js';
export * from './common/raw-json.js';
export * from './common/validation.js';
export * from './common/log.js';
export * from './tracing/tracing.js';
export type { InMemorySpanExporter, ReadableSpan, RunningTracing, TracingOptions } from './tracing/tracing-sdk.js';
export type { Actor, CallContext, PortalScope } from './common/context.js';
export * from './catalog/limits.js';
export * from './catalog/catalog.js';
export * from './teams/keys.js';
export { TeamEntity } from './teams/team.entity.js';
export { ApiKeyEntity } from './teams/api-key.entity.js';
export { TeamService, type IssuedKey, type CreateKeyOptions } from './teams/team.service.js';
export { TenantEntity, type TenantStatus } from './tenants/tenant.entity.js';
export * from './tenants/tenant.inputs.js';
export * from './tenants/tenant.view.js';
export { EventTypeEntity } from './event-types/event-type.entity.js';
export * from './event-types/event-type.inputs.js';
export * from './event-types/event-type.view.js';
export { TeamSettingsEntity } from './settings/settings.entity.js';
export * from './settings/settings.inputs.js';
export * from './settings/settings.view.js';
export * from './idempotency/idempotency.service.js';
export * from './billing/billing.service.js';
export * from './billing/usage.inputs.js';
export { closeBillingMonthsJob } from './billing/usage.jobs.js';
export type { DailySpend, UsageReport, KeyUsage, MeterUsageLine } from './billing/usage.view.js';
export {
  UsageService,
  CLOSE_LOCK_TIMEOUT_MS,
  closeLockName,
  type MonthStatement,
  type CloseRunReport,
} from './billing/usage.service.js';
export { RateLimitService, LEASE_MS, type RateClass, type BucketSpec } from './rate-limits/rate-limit.service.js';
export { ENTITIES } from './entities.js';
export { createServices, type Services, type CoreOptions } from './services.js';
export { openCore, openProductionCore, type OpenCoreOptions, type OpenedCore } from './boot.js';
export { defineJobContract, type JobContract, type JobEnvelope } from './jobs/job-contract.js';
export {
  PgBossJobQueue,
  JOB_SCHEMA,
  MAX_JOB_RETRIES,
  ensureQueues,
  queueRetryPolicy,
  type JobQueue,
  type NewJob,
} from './jobs/job-queue.js';
export * from './jobs/contracts.js';
export {
  deliveryReconcileJob,
  DELIVERY_WAKE_CHANNEL,
  parseWakePayload,
  WAKE_ALL,
  type WakeTarget,
} from './deliveries/delivery.jobs.js';
export { DISPATCH_PARTITIONS, partitionOf } from './engine/dispatch-partitions.js';
export {
  DispatchOwnershipService,
  DISCOVERY_SQL,
  DEFAULT_OWNERSHIP,
  type EndpointSpeed,
  type Membership,
  type OwnershipSettings,
} from './engine/dispatch-ownership.service.js';
export * from './deliveries/delivery-policy.js';
export type { EngineEvent, EngineEventSink } from './deliveries/engine-events.js';
export { DELIVERY_FROM, SHOWN_ATTEMPT_COUNT_SQL, shownStatusSql } from './deliveries/delivery-status.js';
export {
  DispatchService,
  LEASE_MARGIN_MS,
  type ClaimedAttempt,
  type ClaimOptions,
  type ClaimResult,
  type LaneRequest,
  type SlotClaim,
  type SlotCapacity,
  type LaneState,
} from './engine/dispatch.service.js';
export {
  SettlementService,
  type AttemptOutcome,
  type SettledOutcome,
  type SettledRow,
  type SettlementResult,
} from './engine/settlement.service.js';
export { wakeEndpoints, flushWakes } from './engine/wake-endpoints.js';
export * from './messages/message.inputs.js';
export * from './messages/message-status.js';
export type { MessageView } from './messages/message.view.js';
export { MessageService } from './messages/message.service.js';
export { ADMISSION_SLOTS } from './messages/admission-context.js';
export {
  AdmissionService,
  ADMISSION_QUEUE_BOUNDS,
  ADMISSION_WINDOW_MS,
  MAX_ADMISSION_BATCH,
  type AdmissionOptions,
  type AdmissionRequest,
  type AdmissionIdempotency,
  type AdmissionQueueBounds,
} from './messages/admission.service.js';
export * from './deliveries/delivery.inputs.js';
export type { DeliveryView, AttemptView } from './deliveries/delivery.view.js';
export type { DeliveryTarget } from './deliveries/delivery-context.js';
export { FAILURE_CAUSES, FAILURE_PHASES, type AttemptErrorDetail } from './deliveries/attempt-error-detail.js';
export { DeliveryService } from './deliveries/delivery.service.js';
export { MAX_QUOTE_ITEMS, type ReplayQuote, type ReplayQuoteItem } from './deliveries/delivery-replay.js';
export { MessageRepairService, type CancelResult, type RedactResult } from './messages/message-repair.service.js';
export { REDACTION_VACUUM_AFTER_MS, RetentionService, type SweepReport } from './retention/retention.service.js';
export {
  idTimeBound,
  PARTITION_DAYS_AHEAD,
  PartitionMaintenance,
  partitionName,
  type PartitionReport,
  utcDay,
} from './retention/partitions.js';
export { seedDay, type SeedDayOptions, type SeedTarget } from './retention/seed-days.js';
export { MAX_WINDOW_DAYS } from './common/window.js';
export * from './deliveries/replay.inputs.js';
export { ReplayService } from './deliveries/replay.service.js';
export { replayBatchJob, replayCheckJob } from './deliveries/replay.jobs.js';
export { REPLAY_BATCH_SIZE } from './deliveries/replay-batch.js';
export type { ReplayView, ReplayEstimateView, ReplayStatus } from './deliveries/replay.view.js';
export { VERIFIERS } from './sources/verifiers/index.js';
export * from './sources/source.inputs.js';
export { toSourceView, receiveUrl, type SourceView } from './sources/source.view.js';
export { SourceService, type SourceWithSecrets } from './sources/source.service.js';
export { deleteSources } from './sources/source-writes.js';
export type { ReceivingSource } from './sources/source-receiving.js';
export { ReceiveService, type ReceiveAnswer, type ReceiveRequest } from './sources/receive.service.js';
export { inTransaction, lockOwned, lockTeam, reader } from './common/transaction.js';
export { Metrics } from './metrics/metrics.js';
export { OperationalEventService, EVENT_RETENTION_MS, COALESCE_WINDOW_MS } from './events/operational-event.service.js';
export * from './events/operational-event.types.js';
export * from './events/operational-event.inputs.js';
export type { OperationalEventView } from './events/operational-event.view.js';
export { Sealer, SealedWithAnotherKey } from './common/sealing.js';
export {
  EndpointEntity,
  EndpointSecretEntity,
  type EndpointStatus,
  type CircuitState,
  type SignatureScheme,
} from './endpoints/endpoint.entity.js';
export * from './endpoints/endpoint.inputs.js';
export * from './endpoints/endpoint.view.js';
export { EndpointService } from './endpoints/endpoint.service.js';
export { compileRules } from './endpoints/endpoint-rules.js';
export { EndpointCredentialsService, type EndpointCredentials } from './endpoints/endpoint-credentials.service.js';
export { previewEndpoint, type PreviewResult, type PreviewReason } from './endpoints/endpoint-preview.js';
export * from './endpoints/endpoint-test.js';
export { matchesEventPatterns } from './endpoints/patterns.js';
export type { UrlPolicy } from '@svc/egress';
export {
  readCoreConfig,
  parseSealingKey,
  DEPLOYMENT_LIMITS,
  type CoreConfig,
  type RunMode,
  type TracingConfig,
} from './config.js';
export { testCoreOptions, testSealingKeyBase64, TEST_SEALING_KEY } from './testing/core-options.js';
export { EngineSteps, STEP_WORKER_ID } from './testing/engine-steps.js';
export { ConsoleSessionEntity } from './sessions/console-session.entity.js';
export * from './sessions/console-session.service.js';
export * from './analytics/analytics.inputs.js';
export * from './analytics/analytics.view.js';
export { AnalyticsService, type AnalyticsScope } from './analytics/analytics.service.js';
export { analyticsRollupJob, nextRollupRun, ROLLUP_INTERVAL_MS } from './analytics/analytics.jobs.js';
export { ANALYTICS_RETENTION_DAYS, type RollupReport } from './analytics/analytics-rollup.js';
export { deliveriesCreatedFactSql } from './analytics/analytics-facts.js';
export * from './feature-flags/feature-flag.inputs.js';
export type { EnvironmentView, FlagView, DeletedFlagView } from './feature-flags/feature-flag.view.js';
export { FeatureFlagService, type FlagChange } from './feature-flags/feature-flag.service.js';
export { administers } from './feature-flags/environment-access.js';
export * from './subscriptions/subscription.inputs.js';
export type {
  SubscriptionView,
  PlatformEventView,
  SubscriptionDeliveryView,
  SubscriptionAttemptView,
  SubscriptionDeliveryStatus,
} from './subscriptions/subscription.view.js';
export { SubscriptionService, type SubscriptionWithSecret } from './subscriptions/subscription.service.js';
export { SubscriptionHistoryService } from './subscriptions/subscription-history.service.js';
export {
  SubscriptionDispatchService,
  type SubscriptionAttemptOutcome,
} from './subscriptions/subscription-dispatch.service.js';
export { renderEventBody, type ClaimedSubscriptionAttempt } from './subscriptions/subscription-claim.js';
export type { SubscriptionSweepReport } from './subscriptions/subscription-sweep.js';
export * from './subscriptions/subscription-delivery-policy.js';
export { subscriptionDeliveryJob, subscriptionSweepJob } from './subscriptions/subscription.jobs.js';
export { FLAG_UPDATED, WEBHOOK_TEST, EVENTS_WILDCARD, SUBSCRIBABLE_EVENTS } from './subscriptions/platform-events.js';
export * from './portal/portal-session.inputs.js';
export * from './portal/portal-session.view.js';
export * from './portal/portal.inputs.js';
export {
  PortalSessionService,
  isPortalLinkToken,
  PORTAL_LINK_PREFIX,
  PORTAL_SESSION_PREFIX,
  PORTAL_OPEN_PATH,
  portalTokenOf,
  type IssuedPortalSession,
  type OpenedPortalSession,
  type PortalSessionInfo,
} from './portal/portal-session.service.js';
export { PortalService, portalScope, type PortalSigningSecret } from './portal/portal.service.js';
export * from './streams/stream.inputs.js';
export {
  isStreamTokenShaped,
  streamTokenDigest,
  StreamTokenService,
  type StreamTokenView,
  type StreamCaller,
} from './streams/stream-tokens.service.js';
export {
  StreamConnectionService,
  STREAM_CONNECTION_DEAD_AFTER_SECONDS,
  type StreamConnectionView,
  type StreamConnectionLimits,
} from './streams/stream-connections.service.js';
export { StreamDeliveryService } from './streams/stream-deliveries.service.js';
export type { StreamClaim } from './streams/stream-claim.js';
export { forgetConnectionLeases } from './streams/stream-leases.js';
export type { Acknowledged, StreamAck, StreamAckResult } from './streams/stream-settle.js';
export { streamEventData, type StreamEventData } from './streams/stream-event.js';
export {
  STREAM_END_CHANNEL,
  STREAM_WAKE_CHANNEL,
  STREAM_WAKE_SENDER,
  notifyStreamsEnded,
  parseStreamEndSignal,
  parseStreamWake,
  type StreamEndSignal,
} from './streams/stream-signals.js';
