import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import {
  CreateSourceInput as CreateSourceSchema,
  ListSourcesQuery,
  parseInput,
  receiveUrl,
  RotateSourceSecretInput,
  RotateSourceTokenInput,
  UpdateSourceInput as UpdateSourceSchema,
  type CallContext,
  type SourceView,
  type SourceWithSecrets as SourceWithSecretsView,
} from '@svc/core';
import { callContext, loadersOf, type GraphqlContext } from './context.js';
import { toOperationalEvent } from './event.resolver.js';
import { OperationalEvent } from './event.types.js';
import { IDEMPOTENCY_KEY_ARG, IDEMPOTENCY_KEY_OPTIONS, runIdempotent } from './idempotent.js';
import { defined } from './mappers.js';
import { toMessage } from './message.resolver.js';
import { Message } from './message.types.js';
import {
  CreateSourceInput,
  Source,
  SourceConnection,
  SourceWithSecrets,
  UpdateSourceInput,
  VerifierKindInfo,
} from './source.types.js';
import { VERIFIER_KINDS } from './verifier-kinds.js';

export function toSource(view: SourceView): Source {
  return {
    id: view.id,
    tenantId: view.tenant_id,
    name: view.name,
    verification: view.verification,
    kind: view.verification.kind,
    eventType: view.event_type,
    eventTypePath: view.event_type_path,
    eventTypePrefix: view.event_type_prefix,
    billingKeyId: view.billing_key_id,
    status: view.status,
    secretRotationEndsAt: view.secret_rotation_ends_at === null ? null : new Date(view.secret_rotation_ends_at),
    tokenRotationEndsAt: view.token_rotation_ends_at === null ? null : new Date(view.token_rotation_ends_at),
    secretVersion: view.secret_version,
    tokenVersion: view.token_version,
    metadata: view.metadata,
    version: view.version,
    etag: view.etag,
    createdAt: new Date(view.created_at),
    updatedAt: new Date(view.updated_at),
  };
}

/** Which once-shown values a mutation shows: the receive URL (its token), a generated secret. */
interface Shown {
  token: boolean;
  secret: boolean;
}

/** Idempotency keeps the source without its receive URL or secret. */
function withoutSecrets(result: SourceWithSecrets): { source: Source } {
  return { source: result.source };
}

/** GraphQL arguments to the REST input shape the service validates (snake_case names; null clears a mapping). */
function sourceFields(input: CreateSourceInput | UpdateSourceInput): Record<string, unknown> {
  return defined({
    name: input.name ?? undefined,
    verification: input.verification ?? undefined,
    event_type: input.eventType,
    event_type_path: input.eventTypePath,
    event_type_prefix: input.eventTypePrefix,
    billing_key_id: input.billingKeyId ?? undefined,
    metadata: input.metadata ?? undefined,
  });
}

/** How many of a source's newest captures or rejections are listed: 1-200 (more reads 200), default 20. */
const RECENT_FIRST = { nullable: true, defaultValue: 20 } as const;

/**
 * Sources for the console (REST: /sources). The receive URL is built from SVC_PUBLIC_BASE_URL, which the schema
 * is built with (null for a schema that is only printed).
 */
@Resolver(() => Source)
export class SourceResolver {
  constructor(private readonly publicBaseUrl: string | null) {}

  @Authorized()
  @Query(() => SourceConnection, { description: 'Sources (deleted ones excluded), oldest first' })
  async sources(
    @Ctx() context: GraphqlContext,
    @Arg('tenantId', () => ID, { nullable: true }) tenantId?: string,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<SourceConnection> {
    const page = await context.services.sources.listSources(
      callContext(context),
      parseInput(
        ListSourcesQuery,
        defined({ tenant_id: tenantId ?? undefined, limit: first ?? undefined, cursor: after ?? undefined }),
      ),
    );
    return { nodes: page.data.map(toSource), nextCursor: page.nextCursor };
  }

  @Authorized()
  @Query(() => Source, { description: 'A source (never its secret or receive URL)' })
  async source(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<Source> {
    return toSource(await context.services.sources.getSource(callContext(context), id));
  }

  @Authorized()
  @Query(() => [VerifierKindInfo], { description: 'The verifier kinds a source can have, with their settings' })
  verifierKinds(): VerifierKindInfo[] {
    return [...VERIFIER_KINDS];
  }

  @FieldResolver(() => [Message], {
    description: "This source's newest captures, newest first (default 20, at most 200)",
  })
  async recentMessages(
    @Ctx() context: GraphqlContext,
    @Root() source: Source,
    @Arg('first', () => Int, RECENT_FIRST) first?: number | null,
  ): Promise<Message[]> {
    const messages = await loadersOf(context).sourceCaptures.load({
      sourceId: source.id,
      limit: first ?? RECENT_FIRST.defaultValue,
    });
    return messages.map(toMessage);
  }

  @FieldResolver(() => [OperationalEvent], {
    description:
      'Its newest webhooks.source.rejected events of the last 30 days, newest first (a burst within 60 seconds ' +
      'folds into one); data.reason says why',
  })
  async recentRejections(
    @Ctx() context: GraphqlContext,
    @Root() source: Source,
    @Arg('first', () => Int, RECENT_FIRST) first?: number | null,
  ): Promise<OperationalEvent[]> {
    const events = await loadersOf(context).sourceRejections.load({
      sourceId: source.id,
      limit: first ?? RECENT_FIRST.defaultValue,
    });
    return events.map(toOperationalEvent);
  }

  @Authorized()
  @Mutation(() => SourceWithSecrets, {
    description: 'Creates a source: its receive URL, and a generated secret, are shown in this answer only',
  })
  async createSource(
    @Ctx() context: GraphqlContext,
    @Arg('input', () => CreateSourceInput) input: CreateSourceInput,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<SourceWithSecrets> {
    const parsed = parseInput(CreateSourceSchema, { tenant_id: input.tenantId, ...sourceFields(input) });
    return runIdempotent(context, idempotencyKey, {
      operation: 'createSource',
      input: parsed,
      run: async (ctx) => this.reveal(await context.services.sources.createSource(ctx, parsed)),
      stored: withoutSecrets,
      replay: (stored, replay) => this.revealAgain(context, { token: true, secret: true }, stored, replay),
    });
  }

  @Authorized()
  @Mutation(() => Source, {
    description: 'Changes name, verification settings, event type mapping, billing key, status or metadata',
  })
  async updateSource(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
    @Arg('input', () => UpdateSourceInput) input: UpdateSourceInput,
  ): Promise<Source> {
    const parsed = parseInput(UpdateSourceSchema, {
      ...sourceFields(input),
      ...defined({ status: input.status ?? undefined }),
    });
    return toSource(await context.services.sources.updateSource(callContext(context), id, etag, parsed));
  }

  @Authorized()
  @Mutation(() => Boolean, { description: 'Deletes a source: its receive URL stops answering at once' })
  async deleteSource(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
  ): Promise<boolean> {
    await context.services.sources.deleteSource(callContext(context), id, etag);
    return true;
  }

  @Authorized()
  @Mutation(() => SourceWithSecrets, {
    description:
      "A new verification secret: the provider's (secret) or, for kinds that generate theirs, a generated one " +
      'shown in this answer only. The previous one keeps verifying for overlapSeconds (default 86400; 0 retires ' +
      'it at once); while one is in its overlap, only 0 is accepted (invalid_state).',
  })
  async rotateSourceSecret(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
    @Arg('secret', () => String, { nullable: true, description: "The provider's new secret (write-only)" })
    secret?: string | null,
    @Arg('overlapSeconds', () => Int, { nullable: true }) overlapSeconds?: number | null,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<SourceWithSecrets> {
    const parsed = parseInput(
      RotateSourceSecretInput,
      defined({ secret: secret ?? undefined, overlap_seconds: overlapSeconds ?? undefined }),
    );
    return runIdempotent(context, idempotencyKey, {
      operation: 'rotateSourceSecret',
      params: { id },
      input: parsed,
      run: async (ctx) => this.reveal(await context.services.sources.rotateSecret(ctx, id, etag, parsed)),
      stored: withoutSecrets,
      replay: (stored, replay) => this.revealAgain(context, { token: false, secret: true }, stored, replay),
    });
  }

  @Authorized()
  @Mutation(() => SourceWithSecrets, {
    description:
      'A new receive URL, shown in this answer only. The previous one keeps answering for overlapSeconds ' +
      '(default 86400; 0 retires it at once); while one is in its overlap, only 0 is accepted (invalid_state).',
  })
  async rotateSourceToken(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
    @Arg('overlapSeconds', () => Int, { nullable: true }) overlapSeconds?: number | null,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<SourceWithSecrets> {
    const parsed = parseInput(RotateSourceTokenInput, defined({ overlap_seconds: overlapSeconds ?? undefined }));
    return runIdempotent(context, idempotencyKey, {
      operation: 'rotateSourceToken',
      params: { id },
      input: parsed,
      run: async (ctx) => this.reveal(await context.services.sources.rotateToken(ctx, id, etag, parsed)),
      stored: withoutSecrets,
      replay: (stored, replay) => this.revealAgain(context, { token: true, secret: false }, stored, replay),
    });
  }

  private reveal(result: SourceWithSecretsView): SourceWithSecrets {
    return { source: toSource(result.source), receiveUrl: this.receiveUrlOf(result.token), secret: result.secret };
  }

  /**
   * Another look at a reveal (an idempotent replay), like the REST replay: the receive URL and a generated secret
   * are shown again only to the key that made them, and only while they are still the source's current ones.
   */
  private async revealAgain(
    context: GraphqlContext,
    shown: Shown,
    stored: unknown,
    replay: { ctx: CallContext; sameKey: boolean },
  ): Promise<SourceWithSecrets> {
    const { source } = stored as { source: Source };
    if (!replay.sameKey) return { source, receiveUrl: null, secret: null };
    const current = await context.services.sources.currentSecretsMadeBy(replay.ctx, source.id, {
      ...(shown.token ? { token: source.tokenVersion } : {}),
      ...(shown.secret ? { secret: source.secretVersion } : {}),
    });
    return { source, receiveUrl: this.receiveUrlOf(current.token), secret: current.secret };
  }

  private receiveUrlOf(token: string | null): string | null {
    if (token === null) return null;
    if (this.publicBaseUrl === null) throw new Error('the GraphQL schema was built without a public base URL');
    return receiveUrl(this.publicBaseUrl, token);
  }
}
