import { etagFor } from '../common/etag.js';

/** A source row as the service reads it, with when its rotations' overlaps end. */
export interface SourceRow {
  id: string;
  tenant_id: string;
  name: string;
  kind: string;
  settings: Record<string, unknown>;
  event_type: string | null;
  event_type_path: string | null;
  event_type_prefix: string | null;
  billing_key_id: string;
  status: 'active' | 'paused';
  metadata: Record<string, string>;
  version: string;
  secret_version: number;
  token_version: number;
  secret_rotation_ends_at: Date | null;
  token_rotation_ends_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The Source shape of the API (docs/sources.md). The secret and the receive token are never in it. */
export interface SourceView {
  id: string;
  tenant_id: string;
  name: string;
  /** The verifier kind and its settings; the secret is write-only. */
  verification: Record<string, unknown> & { kind: string };
  event_type: string | null;
  event_type_path: string | null;
  event_type_prefix: string | null;
  billing_key_id: string;
  status: 'active' | 'paused';
  /** While a rotated-out secret still verifies: when its overlap ends. */
  secret_rotation_ends_at: string | null;
  /** While a rotated-out receive URL still answers: when its overlap ends. */
  token_rotation_ends_at: string | null;
  secret_version: number;
  token_version: number;
  metadata: Record<string, string>;
  version: string;
  created_at: string;
  updated_at: string;
  etag: string;
}

export function toSourceView(row: SourceRow): SourceView {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    name: row.name,
    verification: { kind: row.kind, ...row.settings },
    event_type: row.event_type,
    event_type_path: row.event_type_path,
    event_type_prefix: row.event_type_prefix,
    billing_key_id: row.billing_key_id,
    status: row.status,
    secret_rotation_ends_at: row.secret_rotation_ends_at?.toISOString() ?? null,
    token_rotation_ends_at: row.token_rotation_ends_at?.toISOString() ?? null,
    secret_version: row.secret_version,
    token_version: row.token_version,
    metadata: row.metadata,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    etag: etagFor(row.id, row.version),
  };
}

/** The public URL providers call: `{base}/v1/receive/{token}`. */
export function receiveUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/v1/receive/${token}`;
}
