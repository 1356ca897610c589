import type {
  DataSource,
  EntityManager,
  EntitySubscriberInterface,
  QueryRunner,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';
import { DELIVERY_WAKE_CHANNEL, REREAD_MARK, WAKE_ALL } from '../deliveries/delivery.jobs.js';

/** A NOTIFY payload is at most 8000 bytes; one notification carries at most this many characters of IDs. */
const MAX_PAYLOAD = 7_000;

/**
 * Wakes the owners of endpoints whose work became due (docs/delivery.md, "Wake-ups"): the one place that sends
 * `svc_delivery_wake`. Called inside a transaction, the wake-up is sent after it commits (nothing if it rolls back);
 * outside one, at once. Either way the notifications of a moment are merged into one `pg_notify` per 7,000 characters
 * of IDs, sent on a connection of its own outside every transaction: a NOTIFY inside a commit takes Postgres' notify
 * queue lock until the commit is flushed, so every admission, replay and endpoint change used to commit one after
 * another through it.
 *
 * `reread`: the endpoint's configuration changed (an edit, resume, rotate, retry_now); its owner also reads its status
 * and circuit again. Without it the owner only looks for due rows, so publishing to an endpoint behind an open
 * circuit costs the engine nothing.
 */
export function wakeEndpoints(
  on: EntityManager | DataSource,
  endpointIds: readonly string[],
  options: { reread?: boolean } = {},
): void {
  if (endpointIds.length === 0) return;
  const manager = 'queryRunner' in on ? on : null;
  const db = manager ? manager.connection : (on as DataSource);
  wakesOf(db).add(manager?.queryRunner ?? null, endpointIds, options.reread ?? false);
}

/** Sends what is waiting now (tests and shutdown); resolves once it is sent. */
export function flushWakes(db: DataSource): Promise<void> {
  return wakesOf(db).flush();
}

const wakesByDataSource = new WeakMap<DataSource, Wakes>();

function wakesOf(db: DataSource): Wakes {
  let wakes = wakesByDataSource.get(db);
  if (!wakes) {
    wakes = new Wakes(db);
    wakesByDataSource.set(db, wakes);
  }
  return wakes;
}

class Wakes implements EntitySubscriberInterface {
  /** Endpoints (and whether to re-read them) of transactions not committed yet. */
  private readonly held = new WeakMap<QueryRunner, Map<string, boolean>>();
  private outbox = new Map<string, boolean>();
  private sending: Promise<void> | null = null;
  private scheduled = false;

  constructor(private readonly db: DataSource) {
    db.subscribers.push(this);
  }

  add(runner: QueryRunner | null, endpointIds: readonly string[], reread: boolean): void {
    const target = runner?.isTransactionActive ? this.heldFor(runner) : this.outbox;
    for (const id of endpointIds) target.set(id, (target.get(id) ?? false) || reread);
    if (target === this.outbox) this.schedule();
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    const runner = event.queryRunner;
    // A savepoint released: the transaction is still open.
    if (runner.isTransactionActive) return;
    const held = this.held.get(runner);
    if (!held) return;
    this.held.delete(runner);
    for (const [id, reread] of held) this.outbox.set(id, (this.outbox.get(id) ?? false) || reread);
    this.schedule();
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    // Rolled back whole: nothing became due. (A savepoint rolled back keeps them: a wake-up too many finds nothing.)
    if (!event.queryRunner.isTransactionActive) this.held.delete(event.queryRunner);
  }

  async flush(): Promise<void> {
    while (this.sending || this.outbox.size > 0) {
      if (this.sending) await this.sending;
      else this.send();
    }
  }

  private heldFor(runner: QueryRunner): Map<string, boolean> {
    let held = this.held.get(runner);
    if (!held) {
      held = new Map();
      this.held.set(runner, held);
    }
    return held;
  }

  /** The next turn of the event loop sends everything added until then, one notification per payload. */
  private schedule(): void {
    if (this.scheduled || this.sending) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.send();
    });
  }

  private send(): void {
    if (this.sending || this.outbox.size === 0) return;
    const batch = this.outbox;
    this.outbox = new Map();
    this.sending = (async () => {
      try {
        for (const payload of payloads(batch))
          await this.db.query('SELECT pg_notify($1, $2)', [DELIVERY_WAKE_CHANNEL, payload]);
      } catch {
        // The database is away or the pool closed: the owners' discovery pass (every 10 s, and at each reconnect of
        // their listener) finds the rows without it.
      } finally {
        this.sending = null;
        if (this.outbox.size > 0) this.schedule();
      }
    })();
  }
}

/** The payloads of a batch: IDs comma separated, `~` before one to re-read, split to fit; "*" past 100 payloads. */
function payloads(batch: Map<string, boolean>): string[] {
  const out: string[] = [];
  let current = '';
  for (const [id, reread] of batch) {
    const entry = (reread ? REREAD_MARK : '') + id;
    if (current.length > 0 && current.length + 1 + entry.length > MAX_PAYLOAD) {
      out.push(current);
      current = '';
    }
    current = current.length === 0 ? entry : `${current},${entry}`;
  }
  if (current.length > 0) out.push(current);
  return out.length > 100 ? [WAKE_ALL] : out;
}
