// Chat summaries of platform events (docs/event-subscription-chat-formats.md): the body each team-chat incoming
// webhook accepts, the URL to post it to, and what the service's answer means for the retry rules. Pure: no I/O.

export type ChatFormat = 'chat_a' | 'chat_b' | 'chat_c';

export const CHAT_FORMATS: Record<ChatFormat, { service: string }> = {
  chat_a: { service: 'Slack' },
  chat_b: { service: 'Microsoft Teams' },
  chat_c: { service: 'Discord' },
};

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

/** How the engine must treat the chat service's answer. */
export type ChatVerdict =
  | { kind: 'succeeded' }
  | { kind: 'retry'; retryAfterSeconds: number | null; reason: string }
  | { kind: 'failed'; reason: string; disable: boolean };

export const TEST_EVENT_TYPE = 'feature_flags.webhook.test';

/** Service limits (characters are counted in UTF-16 code units, which is never fewer than code points). */
export const CHAT_LIMITS = {
  slack: { text: 40_000, sectionText: 3_000, fieldText: 2_000, fields: 10, header: 150, buttonText: 75, url: 3_000 },
  slackBlocks: 50,
  discord: { content: 2_000, title: 256, description: 4_096, fieldName: 256, fieldValue: 1_024, fields: 25 },
  discordEmbedTotal: 6_000,
  teamsBytes: 28 * 1024,
} as const;

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
function truncate(text: string, max: number): string {
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
interface Segment {
  text: string;
  customer: boolean;
  code: boolean;
}
const ours = (text: string): Segment => ({ text, customer: false, code: false });
const code = (text: string, customer = false): Segment => ({ text, customer, code: true });
const theirs = (text: string): Segment => ({ text, customer: true, code: false });

interface Fact {
  name: string;
  value: Segment[];
}

interface Summary {
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
function summarise(summary: ChangeSummary): Summary {
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

const plain = (segments: Segment[]): string => segments.map((segment) => segment.text).join('');

// --- Slack (chat_a) ---------------------------------------------------------------------------------------------

/** Slack's own escaping for mrkdwn text: only &, < and > are control characters. */
function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function slackMrkdwn(segments: Segment[]): string {
  return segments
    .map((segment) =>
      segment.code && !segment.text.includes('`') ? `\`${slackEscape(segment.text)}\`` : slackEscape(segment.text),
    )
    .join('');
}

const slackPlain = (text: string, max: number) => ({ type: 'plain_text', text: truncate(text, max), emoji: false });

/**
 * `text` is the notification fallback (mrkdwn, escaped); the blocks carry the card and hold customer text only in
 * `plain_text` objects, which Slack never parses for mentions, links or formatting.
 */
function slackPayload(summary: Summary): unknown {
  const limits = CHAT_LIMITS.slack;
  const blocks: unknown[] = [
    { type: 'header', text: slackPlain(plain(summary.title), limits.header) },
    {
      type: 'section',
      fields: summary.facts
        .slice(0, limits.fields)
        .map((fact) => slackPlain(`${fact.name}: ${plain(fact.value)}`, limits.fieldText)),
    },
  ];
  if (summary.link && summary.link.length <= limits.url)
    blocks.push({
      type: 'actions',
      elements: [{ type: 'button', text: slackPlain('Open in console', limits.buttonText), url: summary.link }],
    });
  return { text: truncate(slackMrkdwn(summary.title), limits.sectionText), blocks };
}

// --- Microsoft Teams (chat_b) -----------------------------------------------------------------------------------

/**
 * Teams renders Markdown in TextBlock and FactSet text (links included) and its clients disagree on backslash
 * escapes, so every line is a RichTextBlock of TextRuns: Adaptive Cards never parse Markdown in a TextRun.
 */
function teamsRuns(segments: Segment[], style: Record<string, string> = {}): unknown[] {
  return segments
    .filter((segment) => segment.text !== '')
    .map((segment) => ({
      type: 'TextRun',
      text: segment.text,
      ...style,
      ...(segment.code ? { fontType: 'Monospace' } : {}),
    }));
}

function teamsPayload(summary: Summary): unknown {
  const body: unknown[] = [
    {
      type: 'RichTextBlock',
      inlines: teamsRuns(summary.title, { size: 'Medium', weight: 'Bolder' }),
    },
    ...summary.facts.map((fact, index) => ({
      type: 'RichTextBlock',
      ...(index === 0 ? { separator: true } : { spacing: 'Small' }),
      inlines: [{ type: 'TextRun', text: `${fact.name}: `, weight: 'Bolder' }, ...teamsRuns(fact.value)],
    })),
  ];
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body,
          ...(summary.link
            ? { actions: [{ type: 'Action.OpenUrl', title: 'Open in console', url: summary.link }] }
            : {}),
        },
      },
    ],
  };
}

// --- Discord (chat_c) -------------------------------------------------------------------------------------------

/** Discord markdown that could format, hide or link text is shown literally (Discord honours backslash escapes). */
function discordEscape(text: string): string {
  return text.replace(/[\\`*_~|>[\]()#-]/g, (character) => `\\${character}`);
}

function discordMarkdown(segments: Segment[]): string {
  return segments
    .map((segment) => {
      if (segment.code && !segment.text.includes('`')) return `\`${segment.text}\``;
      return segment.customer || segment.code ? discordEscape(segment.text) : segment.text;
    })
    .join('');
}

const embedLength = (embed: { title: string; fields: { name: string; value: string }[] }) =>
  embed.fields.reduce((total, field) => total + field.name.length + field.value.length, embed.title.length);

/** One embed and no `content`; `allowed_mentions: {parse: []}` stops any mention even if one got through. */
function discordPayload(summary: Summary): unknown {
  const limits = CHAT_LIMITS.discord;
  const embed = {
    title: truncate(discordMarkdown(summary.title), limits.title),
    fields: summary.facts.slice(0, limits.fields).map((fact) => ({
      name: truncate(fact.name, limits.fieldName),
      value: truncate(discordMarkdown(fact.value), limits.fieldValue),
      inline: fact.name !== 'Environment' && fact.name !== 'Changed fields',
    })),
  };
  // Never reached with the capped inputs; kept so that no input can exceed the per-message total.
  while (embedLength(embed) > CHAT_LIMITS.discordEmbedTotal && embed.fields.length > 0) embed.fields.pop();
  return {
    embeds: [
      {
        title: embed.title,
        ...(summary.link ? { url: summary.link } : {}),
        color: 0x5865f2,
        fields: embed.fields,
        timestamp: summary.timestamp,
      },
    ],
    allowed_mentions: { parse: [] },
  };
}

/** The request body (UTF-8 JSON bytes) for the chat service. */
export function renderChatPayload(format: ChatFormat, summary: ChangeSummary): Buffer {
  const content = summarise(summary);
  const payload =
    format === 'chat_a' ? slackPayload(content) : format === 'chat_b' ? teamsPayload(content) : discordPayload(content);
  return Buffer.from(JSON.stringify(payload), 'utf8');
}

// --- Where to post ----------------------------------------------------------------------------------------------

function parameterName(parameter: string): string {
  const name = parameter.split('=', 1)[0] ?? '';
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

/**
 * The URL to POST to. Discord answers an execute-webhook request before it has saved the message unless the query
 * says `wait=true` (and then reports no failure), so chat_c gets exactly one `wait=true`: an existing `wait`
 * parameter is set to true in place, later duplicates dropped; every other part and parameter is kept byte for
 * byte. Other services take the URL as given.
 */
export function chatDeliveryUrl(format: ChatFormat, url: string): string {
  if (format !== 'chat_c') return url;
  const hashAt = url.indexOf('#');
  const fragment = hashAt === -1 ? '' : url.slice(hashAt);
  const beforeFragment = hashAt === -1 ? url : url.slice(0, hashAt);
  const queryAt = beforeFragment.indexOf('?');
  const base = queryAt === -1 ? beforeFragment : beforeFragment.slice(0, queryAt);
  const query = queryAt === -1 ? '' : beforeFragment.slice(queryAt + 1);
  const parameters: string[] = [];
  let waited = false;
  for (const parameter of query === '' ? [] : query.split('&')) {
    if (parameterName(parameter) !== 'wait') parameters.push(parameter);
    else if (!waited) {
      parameters.push('wait=true');
      waited = true;
    }
  }
  if (!waited) parameters.push('wait=true');
  return `${base}?${parameters.join('&')}${fragment}`;
}

// --- What the answer means --------------------------------------------------------------------------------------

interface ChatResponse {
  status: number;
  retryAfterSeconds: number | null;
  body: Buffer;
}

/** Slack answers that mean the webhook, its channel or its workspace is gone: disable the subscription. */
const SLACK_GONE = new Set([
  'no_service',
  'no_service_id',
  'no_team',
  'team_disabled',
  'invalid_token',
  'channel_not_found',
  'channel_is_archived',
]);

/** Slack answers that refuse this message (or posting in this context) but leave the webhook itself alive. */
const SLACK_REFUSED = new Set([
  'invalid_payload',
  'no_text',
  'missing_text_or_fallback_or_attachments',
  'too_many_attachments',
  'invalid_blocks',
  'invalid_blocks_format',
  'invalid_attachments',
  'msg_too_long',
  'user_not_found',
  'action_prohibited',
  'posting_to_general_channel_denied',
]);

/** The answer's text for the delivery history: one line, printable, short. */
function bodyText(body: Buffer): string {
  return body
    .toString('utf8')
    .replace(/[\p{Cc}\s\uFFFD]+/gu, ' ')
    .trim()
    .slice(0, 200);
}

function parseJson(body: Buffer): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** Discord errors are `{message, code}`; Teams (Logic Apps) errors are `{error: {code, message}}`. */
function describeBody(format: ChatFormat, body: Buffer): string {
  const json = parseJson(body);
  const error = json && typeof json['error'] === 'object' && json['error'] !== null ? json['error'] : json;
  if (format !== 'chat_a' && error) {
    const { message, code: errorCode } = error as { message?: unknown; code?: unknown };
    if (typeof message === 'string') {
      const detail = typeof errorCode === 'number' || typeof errorCode === 'string' ? ` (code ${errorCode})` : '';
      return bodyText(Buffer.from(`${message}${detail}`));
    }
  }
  return bodyText(body);
}

/** Discord's 429 body has `retry_after` (seconds, fractional); wait the longer of it and Retry-After, rounded up. */
function discordRetryAfter(response: ChatResponse): number | null {
  const json = parseJson(response.body);
  const fromBody = json?.['retry_after'];
  const candidates = [response.retryAfterSeconds, typeof fromBody === 'number' ? fromBody : null].filter(
    (seconds): seconds is number => seconds !== null && Number.isFinite(seconds) && seconds >= 0,
  );
  return candidates.length === 0 ? null : Math.ceil(Math.max(...candidates));
}

function headerRetryAfter(response: ChatResponse): number | null {
  const seconds = response.retryAfterSeconds;
  return seconds !== null && Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : null;
}

/** Slack's short answer (`no_service`, `invalid_payload`, ...), lower-case letters and underscores. */
function slackCode(body: Buffer): string {
  return /^[a-z_]+/.exec(body.toString('utf8').trim())?.[0] ?? '';
}

/** How the engine must treat the chat service's answer (docs/event-subscription-chat-formats.md has the table). */
export function classifyChatResponse(format: ChatFormat, response: ChatResponse): ChatVerdict {
  const { status } = response;
  const said = describeBody(format, response.body);
  const reason = `${CHAT_FORMATS[format].service} answered ${status}${said ? `: ${said}` : ''}`;

  if (status >= 200 && status < 300) {
    // Slack's success body is `ok`; an error word in a 2xx body is still an error.
    const slack = format === 'chat_a' ? slackCode(response.body) : '';
    if (SLACK_GONE.has(slack)) return { kind: 'failed', reason, disable: true };
    if (SLACK_REFUSED.has(slack)) return { kind: 'failed', reason, disable: false };
    return { kind: 'succeeded' };
  }
  if (status === 429)
    return {
      kind: 'retry',
      retryAfterSeconds: format === 'chat_c' ? discordRetryAfter(response) : headerRetryAfter(response),
      reason,
    };
  if (status === 408 || status >= 500) return { kind: 'retry', retryAfterSeconds: headerRetryAfter(response), reason };
  if (status < 200) return { kind: 'retry', retryAfterSeconds: null, reason };

  // 3xx (redirects are never followed) and 4xx: the same request would get the same answer, so no retry. Whether the
  // webhook itself is gone decides whether the subscription is disabled.
  if (format === 'chat_a') {
    const gone = status === 401 || status === 404 || status === 410 || SLACK_GONE.has(slackCode(response.body));
    return { kind: 'failed', reason, disable: gone };
  }
  // Discord and Teams: missing, revoked or forbidden webhooks (Discord bans addresses that keep sending requests
  // that get 401, 403 or 429); any other 3xx or 4xx (400 invalid body, 413, ...) refuses this payload.
  const gone = status === 401 || status === 403 || status === 404 || status === 410;
  return { kind: 'failed', reason, disable: gone };
}
