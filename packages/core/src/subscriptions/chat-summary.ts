// What every chat format shows of a platform event, before its own markup (docs/event-subscription-chat-formats.md),
// and the text helpers the formats share. Pure: no I/O.

export const TEST_EVENT_TYPE = 'feature_flags.webhook.test';

/** What a chat summary may say: identifiers and the kind of change, never flag values or rules. */
export interface ChangeSummary {
  /** evt_... */
  eventId: string;
  /** 'feature_flags.flag.updated' | 'feature_flags.webhook.test' */
  type: string;
  createdAt: Date;
  /** Null for the test event. */
  environment: { id: string; name: string } | null;
  /** A decimal string, e.g. "42". */
  revision: string | null;
  /** 1-128 characters of [A-Za-z0-9_.-]; null for the test event. */
  flagKey: string | null;
  change: 'created' | 'updated' | 'deleted' | null;
  /** Names only, e.g. ['enabled', 'value']; may be empty. */
  changedFields: readonly string[];
  /** key_... of the API key that made the change. */
  actorKeyId: string | null;
  /** An absolute http(s) link to the flag in the web console; null: no link. */
  consoleUrl: string | null;
  /** whe_... */
  subscriptionId: string;
}

/** What we put in a summary at most, whatever the caller passes: keeps every payload far inside every limit. */
const CAP = { customer: 128, identifier: 64, changedFields: 512, consoleUrl: 2_048 } as const;

const ZERO_WIDTH_SPACE = '\u200b';

/**
 * Customer text must never ping anyone: a zero-width space after every `@` and `<` breaks `@everyone`, `@here`,
 * `@channel`, Slack's `<!channel>` and `<@U123>`, Discord's `<@123>` and `<@&role>`, and Teams' `<at>`, while
 * people read the same text.
 */
export function neutraliseMentions(text: string): string {
  return text.replace(/[@<＠﹫]/g, (character) => `${character}${ZERO_WIDTH_SPACE}`);
}

/** Cuts to at most `max` UTF-16 code units, never inside a surrogate pair, marking the cut with an ellipsis. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/**
 * Customer text made safe to show on one line: control and bidirectional-override characters go (a name cannot
 * break a line or turn text around), mentions are neutralised, and the length is capped.
 */
function customerText(text: string): string {
  const flat = text
    .replace(/[\u202a-\u202e\u2066-\u2069\u200e\u200f]/g, '')
    .replace(/[\p{Cc}\u2028\u2029]+/gu, ' ')
    .trim();
  return truncate(neutraliseMentions(flat), CAP.customer);
}

/** Our own identifiers (evt_, ffe_, key_, whe_): shown as given, one line, capped. */
function identifier(text: string): string {
  return truncate(text.replace(/[\p{Cc}\u2028\u2029]+/gu, ' '), CAP.identifier);
}

/** A piece of a line: `customer` text needs escaping in the service's markup; `code` reads better in monospace. */
export interface Segment {
  text: string;
  customer: boolean;
  code: boolean;
}
export const ours = (text: string): Segment => ({ text, customer: false, code: false });
export const code = (text: string, customer = false): Segment => ({ text, customer, code: true });
export const theirs = (text: string): Segment => ({ text, customer: true, code: false });

export interface Fact {
  name: string;
  value: Segment[];
}

export interface Summary {
  title: Segment[];
  facts: Fact[];
  /** A link only when it is an absolute http(s) URL of sensible length. */
  link: string | null;
  /** The event's time, ISO 8601. */
  timestamp: string;
}

function consoleLink(url: string | null): string | null {
  if (url === null || url.length > CAP.consoleUrl) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? url : null;
  } catch {
    return null;
  }
}

/** What every service shows, before its own markup. The test event names only the subscription and the event. */
export function summarise(summary: ChangeSummary): Summary {
  const link = consoleLink(summary.consoleUrl);
  const timestamp = summary.createdAt.toISOString();
  const time = ours(timestamp);
  const subscription = identifier(summary.subscriptionId);
  const event = { name: 'Event', value: [code(identifier(summary.eventId))] };
  if (summary.type === TEST_EVENT_TYPE) {
    return {
      title: [ours('Test event for subscription '), code(subscription)],
      facts: [{ name: 'Subscription', value: [code(subscription)] }, event, { name: 'Time', value: [time] }],
      link,
      timestamp,
    };
  }
  const key = summary.flagKey === null ? null : customerText(summary.flagKey);
  const flag: Segment = key ? code(key, true) : ours('(unknown flag)');
  const change = summary.change ?? 'changed';
  const environment = summary.environment;
  const environmentName = environment ? customerText(environment.name) : '';
  const environmentId = environment ? identifier(environment.id) : '';
  const title: Segment[] = [ours('Feature flag '), flag, ours(environment ? ` ${change} in ` : ` ${change}`)];
  if (environment) title.push(environmentName ? theirs(environmentName) : code(environmentId));
  const facts: Fact[] = [{ name: 'Flag', value: [flag] }];
  if (environment)
    facts.push({
      name: 'Environment',
      value: environmentName
        ? [theirs(environmentName), ours(' ('), code(environmentId), ours(')')]
        : [code(environmentId)],
    });
  facts.push({ name: 'Change', value: [ours(change)] });
  const fields = summary.changedFields.map(customerText).filter((name) => name !== '');
  if (fields.length > 0)
    facts.push({ name: 'Changed fields', value: [theirs(truncate(fields.join(', '), CAP.changedFields))] });
  if (summary.revision !== null) facts.push({ name: 'Revision', value: [ours(identifier(summary.revision))] });
  if (summary.actorKeyId !== null) facts.push({ name: 'By key', value: [code(identifier(summary.actorKeyId))] });
  facts.push(event, { name: 'Time', value: [time] });
  return { title, facts, link, timestamp };
}

export const plain = (segments: Segment[]): string => segments.map((segment) => segment.text).join('');

/** The chat service's answer to one post. */
export interface ChatResponse {
  status: number;
  retryAfterSeconds: number | null;
  body: Buffer;
}

/** The answer's text for the delivery history: one line, printable, short. */
export function bodyText(body: Buffer): string {
  return body
    .toString('utf8')
    .replace(/[\p{Cc}\s\uFFFD]+/gu, ' ')
    .trim()
    .slice(0, 200);
}

export function parseJson(body: Buffer): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
