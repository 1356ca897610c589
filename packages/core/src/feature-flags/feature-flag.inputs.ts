import { z } from 'zod';
import { RawJson } from '../common/raw-json.js';
import { boundedText } from '../common/validation.js';

/** Flag keys: 1 to 128 letters, digits, `_`, `.` and `-`. */
export const FLAG_KEY = /^[A-Za-z0-9_.-]{1,128}$/;
/** The largest flag value, as minified JSON. */
export const MAX_FLAG_VALUE_BYTES = 32_768;
export const MAX_ENVIRONMENTS_PER_TEAM = 50;
export const MAX_FLAGS_PER_ENVIRONMENT = 1000;

/** POST /feature_flags/environments. */
export const CreateEnvironmentInput = z.strictObject({
  name: boundedText(1, 128)
    .refine((name) => name.trim() === name, { message: 'must not start or end with spaces' })
    // For the API description: what trim() keeps (JavaScript's \s is the white space trim() removes).
    .meta({ pattern: '^(?!\\s)[\\s\\S]*(?<!\\s)$' }),
});
export type CreateEnvironmentInput = z.output<typeof CreateEnvironmentInput>;

/**
 * PUT /feature_flags/environments/{id}/flags/{key}: the whole flag (omitted description is "", omitted value is
 * null). `value` is any JSON value, kept as its exact minified text.
 */
export const PutFlagInput = z.strictObject({
  enabled: z.boolean(),
  description: boundedText(0, 1024).default(''),
  value: z
    .union([z.instanceof(RawJson), z.null()], { message: 'must be a JSON value' })
    .default(null)
    .refine((value) => value === null || Buffer.byteLength(value.minified) <= MAX_FLAG_VALUE_BYTES, {
      message: `must be at most ${MAX_FLAG_VALUE_BYTES} bytes of JSON`,
    }),
});
export type PutFlagInput = z.output<typeof PutFlagInput>;

export const ListPlatformPageQuery = z.strictObject({
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListPlatformPageQuery = z.output<typeof ListPlatformPageQuery>;
