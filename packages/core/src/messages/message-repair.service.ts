import type { DataSource, EntityManager } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { notFound } from '../common/errors.js';
import { inTransaction } from '../common/transaction.js';
import {
  eraseContent,
  FINISHED_ROW_COLUMNS,
  finishedFromRows,
  NO_EVENTS,
  recordFinished,
  type FinishedRow,
} from '../deliveries/delivery-records.js';

/** The stored statuses of a delivery that has not finished. */
const PENDING = new Set(['queued', 'retry_wait', 'in_flight']);

export interface CancelResult {
  message_id: string;
  /** Original deliveries canceled now (no attempt held them). */
  canceled_count: number;
  /** Original deliveries with an attempt running: it finishes, its retries are canceled. */
  in_flight_count: number;
  /** Original deliveries already finished (succeeded, failed, expired or canceled before). */
  already_terminal_count: number;
}

export interface RedactResult {
  message_id: string;
  status: 'redacting' | 'complete';
  redacted_at: string;
}

/**
 * Cancel and redact. Both lock the message row first, then its deliveries' queue rows and then the deliveries,
 * each in ID order (the claim and settlement take a queue row before its delivery), so they never deadlock with
 * the engine; a delivery an attempt holds (in_flight) is not taken
 * from it: its attempt finishes and settlement cancels its retries.
 */
export class MessageRepairService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
  ) {}

  /**
   * POST /messages/{id}/cancel: the original deliveries no attempt holds are canceled; in-flight ones finish but
   * their retries are canceled; replays are untouched; repeating changes nothing; nothing is refunded.
   */
  async cancelMessage(ctx: CallContext, id: string): Promise<CancelResult> {
    return inTransaction(this.db, ctx, async (tx) => {
      await this.lockMessage(tx, ctx.actor.teamId, id);
      await lockQueueRows(tx, id, 'AND generation = 0');
      const originals: { id: string; status: string }[] = await tx.query(
        `SELECT id, status FROM deliveries WHERE message_id = $1 AND generation = 0 ORDER BY id FOR NO KEY UPDATE`,
        [id],
      );
      const canceled = await this.cancelPending(tx, id, { originalsOnly: true }, 'message_canceled');
      // The pending ones not canceled are those an attempt holds (their queue rows are leased).
      const inFlight = originals.filter((d) => PENDING.has(d.status) && !canceled.has(d.id)).length;
      return {
        message_id: id,
        canceled_count: canceled.size,
        in_flight_count: inFlight,
        already_terminal_count: originals.length - canceled.size - inFlight,
      };
    });
  }

  /**
   * POST /messages/{id}/redact: the body, its SHA-256 and every transformed copy are erased now (reads and
   * replays stop at once), every pending delivery, replays included, is canceled, and the message is marked redacting. The
   * retention sweep completes it once no database snapshot can still see the old bytes and VACUUM has removed
   * them (docs/retention.md). Metadata and charges stay. Repeating changes nothing.
   */
  async redactMessage(ctx: CallContext, id: string): Promise<RedactResult> {
    return inTransaction(this.db, ctx, async (tx) => {
      const now = this.clock.now();
      const message = await this.lockMessage(tx, ctx.actor.teamId, id);
      if (message.redacted_at !== null)
        return { message_id: id, status: message.redaction_status!, redacted_at: message.redacted_at.toISOString() };
      await lockQueueRows(tx, id, '');
      await tx.query(
        `SELECT 1 FROM deliveries WHERE message_id = $1 AND status IN ('queued', 'retry_wait', 'in_flight')
          ORDER BY id FOR NO KEY UPDATE`,
        [id],
      );
      await this.cancelPending(tx, id, { originalsOnly: false }, 'message_redacted');
      await eraseContent(tx, [id], now);
      // The body's hash goes with it: for a guessable body (a card number) it would confirm a guess.
      await tx.query(
        `UPDATE messages SET redacted_at = $2, redaction_status = 'redacting', body_sha256 = NULL WHERE id = $1`,
        [id, now],
      );
      return { message_id: id, status: 'redacting', redacted_at: now.toISOString() };
    });
  }

  private async lockMessage(
    tx: EntityManager,
    teamId: string,
    id: string,
  ): Promise<{ redacted_at: Date | null; redaction_status: 'redacting' | 'complete' | null }> {
    const rows: { redacted_at: Date | null; redaction_status: 'redacting' | 'complete' | null }[] = await tx.query(
      `SELECT redacted_at, redaction_status FROM messages WHERE id = $1 AND team_id = $2 FOR NO KEY UPDATE`,
      [id, teamId],
    );
    if (!rows[0]) throw notFound('message');
    return rows[0];
  }

  /**
   * Waiting deliveries (queued, retry_wait) become canceled with the reason; in-flight ones keep their attempt
   * and get cancel_retries. The caller has locked the rows in ID order. Returns the IDs of those canceled.
   */
  private async cancelPending(
    tx: EntityManager,
    messageId: string,
    scope: { originalsOnly: boolean },
    reason: 'message_canceled' | 'message_redacted',
  ): Promise<Set<string>> {
    const now = this.clock.now();
    const generation = scope.originalsOnly ? 'AND generation = 0' : '';
    // The queue rows no attempt holds go first (the claim locks a row before its delivery, and so does this).
    const [rows]: [FinishedRow[], number] = await tx.query(
      `WITH gone AS (
         DELETE FROM delivery_queue q
          WHERE q.lease_owner IS NULL
            AND q.delivery_id IN (SELECT id FROM deliveries WHERE message_id = $1 ${generation}
                                     AND status IN ('queued', 'retry_wait', 'in_flight'))
         RETURNING q.delivery_id)
       UPDATE deliveries d SET status = 'canceled', last_error = $2, lease_expires_at = NULL, finished_at = $3,
              updated_at = $3
         FROM gone WHERE d.id = gone.delivery_id AND d.status IN ('queued', 'retry_wait', 'in_flight')
        RETURNING ${FINISHED_ROW_COLUMNS}`,
      [messageId, reason, now],
    );
    await tx.query(
      `UPDATE deliveries SET cancel_retries = true, updated_at = $2
        WHERE message_id = $1 ${generation} AND status IN ('queued', 'retry_wait', 'in_flight') AND NOT cancel_retries`,
      [messageId, now],
    );
    // Cancellations emit no operational event.
    await recordFinished(tx, finishedFromRows(rows, 'canceled', reason), NO_EVENTS, now);
    return new Set(rows.map((row) => row.id));
  }
}

/** Locks the queue rows of a message's pending deliveries (generation filter as SQL), in ID order. */
async function lockQueueRows(tx: EntityManager, messageId: string, generation: string): Promise<void> {
  await tx.query(
    `SELECT q.delivery_id FROM delivery_queue q
      WHERE q.delivery_id IN (SELECT id FROM deliveries WHERE message_id = $1 ${generation})
      ORDER BY q.delivery_id FOR UPDATE OF q`,
    [messageId],
  );
}
