/** An API error as the console shows it: the REST error code, a readable message and the field it concerns. */
export interface ApiError {
  code: string;
  message: string;
  /** The REST API's snake_case field name (external_id, metadata.plan, ...), or null. */
  field: string | null;
}

export type ActionResult<T> = { ok: true; data: T } | { ok: false; error: ApiError };

/** True when the error concerns `field` itself or a member of it (metadata.plan concerns metadata). */
export function concernsField(error: ApiError | null, field: string): boolean {
  return error?.field != null && (error.field === field || error.field.startsWith(`${field}.`));
}

/**
 * The message to show next to `field`, or undefined. The API prefixes field messages with the field name
 * ("name: names starting with svc. are reserved"); next to the field itself that prefix is noise, but for a
 * spot inside it ("filter.all.0.op: ...") the part below the field says where to look ("all.0.op: ...").
 */
export function fieldMessage(error: ApiError | null, field: string): string | undefined {
  if (!error || !concernsField(error, field)) return undefined;
  const prefix = `${error.field}: `;
  if (!error.message.startsWith(prefix)) return error.message;
  const rest = error.message.slice(prefix.length);
  return error.field === field ? rest : `${error.field!.slice(field.length + 1)}: ${rest}`;
}

/** True when no field of the form shows the error, so it belongs in a notification. */
export function isFormLevel(error: ApiError, fields: readonly string[]): boolean {
  return !fields.some((field) => concernsField(error, field));
}
