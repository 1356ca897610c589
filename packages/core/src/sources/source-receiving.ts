import type { EntityManager } from 'typeorm';
import type { Sealer } from '../common/sealing.js';
import { secretContext, tokenDigest } from './source-credentials.js';

/** What the receive route needs of a source, found by its token. */
export interface ReceivingSource {
  id: string;
  teamId: string;
  tenantId: string;
  kind: string;
  settings: Record<string, unknown>;
  eventType: string | null;
  eventTypePath: string | null;
  eventTypePrefix: string | null;
  billingKeyId: string;
  status: 'active' | 'paused';
  /** Every secret that verifies now: the current one first, then those in their overlap. */
  secrets: string[];
  /** The billing key can pay (not revoked, allowed to use webhooks). */
  billingKeyUsable: boolean;
  /** The team or its webhooks use is suspended. */
  suspended: boolean;
}

/** The receive route's lookup: one round trip by the token's SHA-256; null for unknown, retired or deleted. */
export async function findSourceByToken(
  db: Pick<EntityManager, 'query'>,
  sealer: Sealer,
  token: string,
  now: Date,
): Promise<ReceivingSource | null> {
  const rows: {
    id: string;
    team_id: string;
    tenant_id: string;
    kind: string;
    settings: Record<string, unknown>;
    event_type: string | null;
    event_type_path: string | null;
    event_type_prefix: string | null;
    billing_key_id: string;
    status: 'active' | 'paused';
    secrets: { version: number; sealed: string }[];
    billing_key_usable: boolean;
    suspended: boolean;
  }[] = await db.query(
    `SELECT s.id, s.team_id, s.tenant_id, s.kind, s.settings, s.event_type, s.event_type_path, s.event_type_prefix,
            s.billing_key_id, s.status,
            (SELECT (k.revoked_at IS NULL OR k.revoked_at > $2) AND k.webhooks_allowed
               FROM api_keys k WHERE k.id = s.billing_key_id)
              AS billing_key_usable,
            (SELECT tm.suspended OR tm.webhooks_suspended FROM teams tm WHERE tm.id = s.team_id) AS suspended,
            (SELECT json_agg(json_build_object('version', x.version, 'sealed', encode(x.secret_sealed, 'base64'))
                             ORDER BY x.version DESC)
               FROM source_secrets x WHERE x.source_id = s.id AND (x.expires_at IS NULL OR x.expires_at > $2)) AS secrets
       FROM source_tokens t JOIN sources s ON s.id = t.source_id
      WHERE t.token_sha256 = $1 AND (t.expires_at IS NULL OR t.expires_at > $2) AND s.deleted_at IS NULL`,
    [tokenDigest(token), now],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    teamId: row.team_id,
    tenantId: row.tenant_id,
    kind: row.kind,
    settings: row.settings,
    eventType: row.event_type,
    eventTypePath: row.event_type_path,
    eventTypePrefix: row.event_type_prefix,
    billingKeyId: row.billing_key_id,
    status: row.status,
    billingKeyUsable: row.billing_key_usable,
    suspended: row.suspended,
    secrets: (row.secrets ?? []).map((s) =>
      sealer.open(Buffer.from(s.sealed, 'base64'), secretContext(row.id, s.version)),
    ),
  };
}
