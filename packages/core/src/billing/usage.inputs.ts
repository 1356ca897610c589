import { z } from 'zod';

/** A billing month as the API writes it: `YYYY-MM` (UTC). */
export const BILLING_MONTH_PATTERN = /^2\d{3}-(0[1-9]|1[0-2])$/;

/** GET /meta/usage: `month` defaults to the current UTC month; a month in the future is refused by the service. */
export const UsageQuery = z.strictObject({
  month: z.string().regex(BILLING_MONTH_PATTERN, 'must be a month written YYYY-MM (2000-01 or later)').optional(),
});
export type UsageQuery = z.output<typeof UsageQuery>;
