import { Arg, Authorized, Ctx, Field, Mutation, ObjectType, Resolver } from 'type-graphql';
import { isServiceError, isValidSecretKey, ServiceError, sessionTokenOf } from '@svc/core';
import { PUBLIC } from './authorization.js';
import type { GraphqlContext } from './context.js';

/**
 * Before the key is checked, a sign-in spends its address's, its key's and the installation's buckets
 * (public-limits.ts); once it is, its team's own, so one team cannot fill the sessions table.
 */
const TEAM_SIGN_IN_LIMIT = { bucket: 'console_sessions', spec: { rate: 1, burst: 20 } } as const;

@ObjectType({ description: 'A web console session; the token stands in for the secret key in the console cookie' })
export class ConsoleSession {
  @Field(() => String, { description: 'Bearer token for the GraphQL API (svc_cs_...); shown once, stored hashed' })
  token!: string;
  @Field(() => Date, { description: 'When the session ends, 12 hours after sign-in' }) expiresAt!: Date;
}

@Resolver()
export class ConsoleSessionResolver {
  /** Public: the secret key is the credential. Answers like any request with that key (401, 403, 429). */
  // Public: the caller has no session yet; the secret key it trades is checked inside.
  @Authorized(PUBLIC)
  @Mutation(() => ConsoleSession, { description: 'Trades a secret key for an expiring, revocable console session' })
  async createConsoleSession(
    @Ctx() context: GraphqlContext,
    @Arg('secretKey', () => String) secretKey: string,
  ): Promise<ConsoleSession> {
    const { rateLimits, consoleSessions } = context.services;
    // Something that cannot be a key is refused before anything is spent on it.
    if (!isValidSecretKey(secretKey)) throw new ServiceError('unauthorized', 'a valid secret key is required');
    await context.publicLimits.take('signIn', context.clientAddress, secretKey);
    const session = await consoleSessions.createSession(secretKey);
    try {
      await rateLimits.take(session.teamId, TEAM_SIGN_IN_LIMIT.bucket, TEAM_SIGN_IN_LIMIT.spec);
    } catch (error) {
      // Over the team's limit: the session just made is not handed out, so it must not stay usable either.
      if (isServiceError(error)) await consoleSessions.revokeSession(session.token);
      throw error;
    }
    return { token: session.token, expiresAt: session.expiresAt };
  }

  /** Public: holding the token is the authority to end it, so sign-out works even for a suspended team. */
  // Public: it reads the session token itself, so a suspended team can still sign out.
  @Authorized(PUBLIC)
  @Mutation(() => Boolean, { description: 'Ends the console session whose token authorizes this request' })
  async endConsoleSession(@Ctx() context: GraphqlContext): Promise<boolean> {
    const token = sessionTokenOf(context.authorization);
    if (token === null)
      throw new ServiceError('unauthorized', 'send the console session token as Authorization: Bearer svc_cs_...');
    await context.services.consoleSessions.revokeSession(token);
    return true;
  }
}
