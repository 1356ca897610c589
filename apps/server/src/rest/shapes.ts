import { z } from 'zod';

export const timestamp = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
export const decimalString = z.string().regex(/^\d+$/);

export const ErrorShape = z.strictObject({
  error: z.strictObject({
    code: z.string(),
    message: z.string(),
    field: z.string().optional(),
    resource_id: z.string().optional(),
  }),
});

export function listOf<T extends z.ZodType>(item: T) {
  return z.strictObject({ data: z.array(item), next_cursor: z.string().nullable() });
}

export const pageQuery = {
  limit: z.string().optional().describe('1 to 200, default 50'),
  cursor: z.string().optional().describe('next_cursor of the previous page'),
};
