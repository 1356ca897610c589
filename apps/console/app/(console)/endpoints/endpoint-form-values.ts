import type { ApiError } from '@/lib/api-error';
import { newRow, toRecord, toRows, type KeyValueRow } from '@/lib/key-value-rows';
import {
  ENDPOINT_DEFAULTS,
  type CreateEndpointInput,
  type DeliveryMode,
  type Endpoint,
  type EndpointChanges,
  type EndpointFields,
  type EndpointOrdering,
  type OrderingOnFailure,
  type SignatureScheme,
} from './endpoint.types';

/** What an edit does with a write-only value it cannot show: keep it, clear it, or replace it. */
export type CredentialChoice = 'keep' | 'clear' | 'replace';

/** The form as typed. Numbers stay text until submit so a half-typed value can be shown back. */
export interface EndpointFormValues {
  url: string;
  name: string;
  description: string;
  events: string[];
  status: 'enabled' | 'paused';
  maxConcurrency: string | number;
  ordering: EndpointOrdering;
  orderingOnFailure: OrderingOnFailure;
  ratePerSecond: string | number;
  timeoutSeconds: string | number;
  retryDelays: string[];
  /** Create always sends the rows; an edit sends them only for replace (clear is replace with no rows). */
  headersChoice: 'keep' | 'replace';
  headerRows: KeyValueRow[];
  authorizationChoice: CredentialChoice;
  authorization: string;
  metadataRows: KeyValueRow[];
  filter: string;
  transform: string;
  /** Create only: how deliveries are signed (rotate_secret changes it later). */
  signatureScheme: SignatureScheme;
  /** Create only: POSTed to a URL, or streamed to a receiver that connects (no URL). */
  deliveryMode: DeliveryMode;
}

/** Props of the form's sections: the values, a way to change some of them, and the last error. */
export interface FormSectionProps {
  values: EndpointFormValues;
  change: (patch: Partial<EndpointFormValues>) => void;
  error: ApiError | null;
}

/** The REST field names the form shows errors for; any other error goes to a notification. */
export const FORM_FIELDS = [
  'tenant_id',
  'url',
  'name',
  'description',
  'events',
  'status',
  'max_concurrency',
  'ordering',
  'ordering_on_failure',
  'rate_per_second',
  'timeout_seconds',
  'retry_delays_seconds',
  'headers',
  'authorization',
  'metadata',
  'filter',
  'transform',
  'signature_scheme',
  'delivery_mode',
] as const;

/** The REST field each form value is sent as, so editing a value can clear the error about it. */
export const FIELD_OF_VALUE: Record<keyof EndpointFormValues, (typeof FORM_FIELDS)[number]> = {
  url: 'url',
  name: 'name',
  description: 'description',
  events: 'events',
  status: 'status',
  maxConcurrency: 'max_concurrency',
  ordering: 'ordering',
  orderingOnFailure: 'ordering_on_failure',
  ratePerSecond: 'rate_per_second',
  timeoutSeconds: 'timeout_seconds',
  retryDelays: 'retry_delays_seconds',
  headersChoice: 'headers',
  headerRows: 'headers',
  authorizationChoice: 'authorization',
  authorization: 'authorization',
  metadataRows: 'metadata',
  filter: 'filter',
  transform: 'transform',
  signatureScheme: 'signature_scheme',
  deliveryMode: 'delivery_mode',
};

/** The ranges the API accepts, checked here too so a typo is caught before the request. */
const RANGES = {
  max_concurrency: { min: 1, max: 3 },
  rate_per_second: { min: 1, max: 1000 },
  timeout_seconds: { min: 1, max: 30 },
} as const;

export function initialValues(endpoint?: Endpoint): EndpointFormValues {
  return {
    url: endpoint?.url ?? '',
    name: endpoint?.name ?? '',
    description: endpoint?.description ?? '',
    events: endpoint ? [...endpoint.events] : [...ENDPOINT_DEFAULTS.events],
    status: 'enabled',
    maxConcurrency: endpoint?.maxConcurrency ?? ENDPOINT_DEFAULTS.maxConcurrency,
    ordering: endpoint?.ordering ?? 'none',
    orderingOnFailure: endpoint?.orderingOnFailure ?? 'continue',
    ratePerSecond: endpoint?.ratePerSecond ?? ENDPOINT_DEFAULTS.ratePerSecond,
    timeoutSeconds: endpoint?.timeoutSeconds ?? ENDPOINT_DEFAULTS.timeoutSeconds,
    retryDelays: (endpoint?.retryDelaysSeconds ?? ENDPOINT_DEFAULTS.retryDelaysSeconds).map(String),
    headersChoice: endpoint ? 'keep' : 'replace',
    // Header values cannot be read back: an edit starts from the names, to be typed again.
    headerRows: endpoint ? endpoint.headers.map((name) => newRow(name, '')) : [newRow()],
    authorizationChoice: endpoint ? 'keep' : 'replace',
    authorization: '',
    metadataRows: endpoint ? toRows(endpoint.metadata) : [newRow()],
    filter: endpoint?.filter ?? '',
    transform: endpoint?.transform ?? '',
    signatureScheme: endpoint?.signatureScheme ?? 'hmac',
    deliveryMode: endpoint?.deliveryMode ?? 'push',
  };
}

/** True when both URLs parse and their hosts differ: the API then wants the credentials given again. */
export function hostChanged(before: string, after: string): boolean {
  try {
    return new URL(before).hostname !== new URL(after).hostname;
  } catch {
    return false;
  }
}

function invalid(field: string, message: string): ApiError {
  return { code: 'invalid_field', message, field };
}

function wholeNumber(value: string | number, field: keyof typeof RANGES): number | ApiError {
  const { min, max } = RANGES[field];
  const number = typeof value === 'number' ? value : Number(value);
  if (value === '' || !Number.isInteger(number) || number < min || number > max)
    return invalid(field, `Enter a whole number from ${min} to ${max}.`);
  return number;
}

function retryDelays(tags: readonly string[]): number[] | ApiError {
  const delays = tags.map((tag) => tag.trim());
  const wrong = delays.find((delay) => !/^[1-9]\d*$/.test(delay));
  if (wrong !== undefined)
    return invalid('retry_delays_seconds', `"${wrong}" is not a whole number of seconds (1 or more).`);
  return delays.map(Number);
}

/** Blank rule text means no rule; anything else goes to the API exactly as typed. */
function ruleText(text: string): string | null {
  return text.trim() === '' ? null : text;
}

type Read<T> = { ok: true; value: T } | { ok: false; error: ApiError };

/** Checks what the form can check itself and builds what create and update both send. */
function readShared(
  values: EndpointFormValues,
): Read<EndpointFields & { filter: string | null; transform: string | null }> {
  const maxConcurrency = wholeNumber(values.maxConcurrency, 'max_concurrency');
  if (typeof maxConcurrency !== 'number') return { ok: false, error: maxConcurrency };
  const ratePerSecond = wholeNumber(values.ratePerSecond, 'rate_per_second');
  if (typeof ratePerSecond !== 'number') return { ok: false, error: ratePerSecond };
  const timeoutSeconds = wholeNumber(values.timeoutSeconds, 'timeout_seconds');
  if (typeof timeoutSeconds !== 'number') return { ok: false, error: timeoutSeconds };
  const retryDelaysSeconds = retryDelays(values.retryDelays);
  if (!Array.isArray(retryDelaysSeconds)) return { ok: false, error: retryDelaysSeconds };
  const metadata = toRecord(values.metadataRows);
  if (!metadata.ok) return { ok: false, error: invalid('metadata', metadata.message) };
  return {
    ok: true,
    value: {
      // A stream endpoint has no URL: none is sent.
      ...(values.deliveryMode === 'stream' ? {} : { url: values.url.trim() }),
      name: values.name,
      description: values.description,
      events: values.events,
      // An ordered endpoint sends one at a time: the API refuses any other max_concurrency for it.
      maxConcurrency: values.ordering === 'ordered' ? 1 : maxConcurrency,
      ordering: values.ordering,
      orderingOnFailure: values.orderingOnFailure,
      ratePerSecond,
      timeoutSeconds,
      retryDelaysSeconds,
      metadata: metadata.record,
      filter: ruleText(values.filter),
      transform: ruleText(values.transform),
    },
  };
}

function readHeaders(values: EndpointFormValues): Read<Record<string, string>> {
  const headers = toRecord(values.headerRows);
  return headers.ok ? { ok: true, value: headers.record } : { ok: false, error: invalid('headers', headers.message) };
}

export function toCreateInput(tenantId: string, values: EndpointFormValues): Read<CreateEndpointInput> {
  const shared = readShared(values);
  if (!shared.ok) return shared;
  const headers = readHeaders(values);
  if (!headers.ok) return headers;
  return {
    ok: true,
    value: {
      ...shared.value,
      tenantId,
      deliveryMode: values.deliveryMode,
      signatureScheme: values.signatureScheme,
      status: values.status,
      headers: headers.value,
      // A stream endpoint has no Authorization to send (the form hides the field).
      authorization: values.deliveryMode === 'stream' || values.authorization === '' ? null : values.authorization,
    },
  };
}

export function toChanges(values: EndpointFormValues): Read<EndpointChanges> {
  const shared = readShared(values);
  if (!shared.ok) return shared;
  const changes: EndpointChanges = { ...shared.value };
  if (values.headersChoice === 'replace') {
    const headers = readHeaders(values);
    if (!headers.ok) return headers;
    changes.headers = headers.value;
  }
  if (values.authorizationChoice === 'clear') changes.authorization = null;
  if (values.authorizationChoice === 'replace') {
    if (values.authorization === '')
      return { ok: false, error: invalid('authorization', 'Type the new value, or choose Keep or Clear.') };
    changes.authorization = values.authorization;
  }
  return { ok: true, value: changes };
}
