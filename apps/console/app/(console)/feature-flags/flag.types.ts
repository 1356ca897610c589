export interface Environment {
  id: string;
  name: string;
  /** Decimal string; moves with every committed flag change in the environment. */
  revision: string;
  etag: string;
  createdAt: string;
  updatedAt: string;
}

export interface EnvironmentPage {
  nodes: Environment[];
  nextCursor: string | null;
}

export interface Flag {
  environmentId: string;
  key: string;
  enabled: boolean;
  description: string;
  /** The JSON value served when enabled, as its exact (minified) text. */
  value: string;
  version: string;
  revision: string;
  etag: string;
  updatedBy: string;
  updatedAt: string;
}

export interface FlagPage {
  nodes: Flag[];
  nextCursor: string | null;
}

/** What the flag form sends: the whole flag (PUT replaces it). */
export interface FlagInput {
  key: string;
  enabled: boolean;
  description: string;
  /** JSON text; blank means null. */
  value: string;
  /** The flag's ETag when it exists; null creates it. */
  etag: string | null;
}

export const ENVIRONMENTS_PAGE_SIZE = 50;
export const FLAGS_PAGE_SIZE = 100;
/** Flag keys: 1 to 128 letters, digits, _, . and -. */
export const FLAG_KEY_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
