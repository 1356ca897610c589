import type {
  EnvironmentFlagsQuery,
  EnvironmentsQuery,
  FeatureFlagEnvironmentFieldsFragment,
  FeatureFlagFieldsFragment,
} from '@/gql/graphql';

export type Environment = FeatureFlagEnvironmentFieldsFragment;

export type EnvironmentPage = EnvironmentsQuery['featureFlagEnvironments'];

export type Flag = FeatureFlagFieldsFragment;

export type FlagPage = EnvironmentFlagsQuery['featureFlags'];

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
