import { RawJson } from '../common/raw-json.js';
import { etagFor } from '../common/etag.js';

export interface EnvironmentRow {
  id: string;
  team_id: string;
  name: string;
  revision: string;
  created_at: Date;
  updated_at: Date;
}

export interface EnvironmentView {
  id: string;
  name: string;
  /** Raised by every committed flag change in the environment (decimal string). */
  revision: string;
  createdAt: Date;
  updatedAt: Date;
  etag: string;
}

export function toEnvironmentView(row: EnvironmentRow): EnvironmentView {
  return {
    id: row.id,
    name: row.name,
    revision: String(row.revision),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    etag: etagFor(row.id, row.revision),
  };
}

export interface FlagRow {
  environment_id: string;
  key: string;
  enabled: boolean;
  description: string;
  value: string;
  version: string;
  revision: string;
  created_by: string;
  updated_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface FlagView {
  environmentId: string;
  key: string;
  enabled: boolean;
  description: string;
  /** The JSON value served when enabled, as the exact minified text stored. */
  value: RawJson;
  version: string;
  /** The environment revision of the flag's last change. */
  revision: string;
  createdBy: string;
  updatedBy: string;
  createdAt: Date;
  updatedAt: Date;
  etag: string;
}

/** A flag's ETag: its environment and key name it (both are ETag-safe characters), its version counts changes. */
export function flagEtag(environmentId: string, key: string, version: string): string {
  return etagFor(`${environmentId}/${key}`, version);
}

export function toFlagView(row: FlagRow): FlagView {
  return {
    environmentId: row.environment_id,
    key: row.key,
    enabled: row.enabled,
    description: row.description,
    value: new RawJson(row.value),
    version: String(row.version),
    revision: String(row.revision),
    createdBy: row.created_by,
    updatedBy: row.updated_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    etag: flagEtag(row.environment_id, row.key, String(row.version)),
  };
}

export interface DeletedFlagView {
  environmentId: string;
  key: string;
  deleted: true;
  revision: string;
}
