// Chat summaries of platform events (docs/event-subscription-chat-formats.md): the body each team-chat incoming
// webhook accepts, and what its answers mean for the retry rules. Pure: no I/O.

export type ChatFormat = 'chat_a' | 'chat_b' | 'chat_c';

export const CHAT_FORMATS: Record<ChatFormat, { service: string }> = {
  chat_a: { service: 'Slack' },
  chat_b: { service: 'Microsoft Teams' },
  chat_c: { service: 'Discord' },
};

/** What a chat summary may say: identifiers and the kind of change, never flag values or rules. */
export interface ChangeSummary {
  eventId: string;
  /** 'feature_flags.flag.updated' or 'feature_flags.webhook.test'. */
  type: string;
  createdAt: Date;
  /** Null for the test event. */
  environment: { id: string; name: string } | null;
  revision: string | null;
  flagKey: string | null;
  change: 'created' | 'updated' | 'deleted' | null;
  changedFields: readonly string[];
  actorKeyId: string | null;
  /** An absolute http(s) link to the flag (or the subscription) in the console; null: no link. */
  consoleUrl: string | null;
  subscriptionId: string;
}

export type ChatVerdict =
  | { kind: 'succeeded' }
  | { kind: 'retry'; retryAfterSeconds: number | null; reason: string }
  | { kind: 'failed'; reason: string; disable: boolean };

const ZERO_WIDTH_SPACE = '\u200b';

/**
 * Customer text (environment names) must never ping a channel: a zero-width space after every `@` and `<` breaks
 * `@everyone`, `@here`, `@channel`, Slack's `<!channel>` and Teams' `<at>` without changing what people read.
 */
export function neutraliseMentions(text: string): string {
  return text.replace(/[@<]/g, (character) => `${character}${ZERO_WIDTH_SPACE}`);
}

/** Slack's own escaping for message text (mrkdwn): &, < and >. */
function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Discord markdown that could format, hide or link text is shown literally (Discord honours backslash escapes). */
function discordEscape(text: string): string {
  return text.replace(/[\\`*_~|>[\]()]/g, (character) => `\\${character}`);
}

function truncate(text: string, max: number): string {
  const characters = [...text];
  return characters.length <= max ? text : `${characters.slice(0, max - 1).join('')}…`;
}

interface SummaryLines {
  /** One line: what happened. */
  title: string;
  facts: { name: string; value: string }[];
}

/**
 * The readable content, the same for every service. `escape` makes customer text (the environment name, the flag
 * key) literal in the service's markup; our identifiers need none.
 */
function describe(summary: ChangeSummary, escape: (text: string) => string = (text) => text): SummaryLines {
  const when = summary.createdAt.toISOString();
  if (summary.type === 'feature_flags.webhook.test' || summary.flagKey === null) {
    return {
      title: `Test event for event subscription ${summary.subscriptionId}`,
      facts: [
        { name: 'Subscription', value: summary.subscriptionId },
        { name: 'Event', value: summary.eventId },
        { name: 'Time', value: when },
      ],
    };
  }
  const environmentName = summary.environment
    ? escape(neutraliseMentions(summary.environment.name))
    : 'an unknown environment';
  const flagKey = escape(summary.flagKey);
  const environment = summary.environment ? `${environmentName} (${summary.environment.id})` : environmentName;
  const change = summary.change ?? 'changed';
  const facts = [
    { name: 'Flag', value: flagKey },
    { name: 'Environment', value: environment },
    { name: 'Change', value: change },
  ];
  if (summary.changedFields.length > 0) facts.push({ name: 'Changed fields', value: summary.changedFields.join(', ') });
  if (summary.revision !== null) facts.push({ name: 'Revision', value: summary.revision });
  if (summary.actorKeyId !== null) facts.push({ name: 'By key', value: summary.actorKeyId });
  facts.push({ name: 'Event', value: summary.eventId }, { name: 'Time', value: when });
  return { title: `Feature flag ${flagKey} ${change} in ${environmentName}`, facts };
}

/** Slack incoming webhook: `text` (the notification fallback, mrkdwn) and Block Kit blocks in plain text. */
function slackPayload(summary: ChangeSummary): unknown {
  const { title, facts } = describe(summary);
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(title, 150), emoji: false } },
    {
      type: 'section',
      // At most 10 fields of at most 2,000 characters each.
      fields: facts.slice(0, 10).map((fact) => ({
        type: 'plain_text',
        text: truncate(`${fact.name}: ${fact.value}`, 2000),
        emoji: false,
      })),
    },
  ];
  if (summary.consoleUrl)
    blocks.push({
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: 'Open in console', emoji: false },
          url: truncate(summary.consoleUrl, 3000),
        },
      ],
    });
  return { text: truncate(slackEscape(title), 3000), blocks };
}

/** Microsoft Teams (Workflows "when a webhook request is received"): a message with one Adaptive Card. */
function teamsPayload(summary: ChangeSummary): unknown {
  const { title, facts } = describe(summary);
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
          body: [
            { type: 'TextBlock', text: title, weight: 'Bolder', size: 'Medium', wrap: true },
            { type: 'FactSet', facts: facts.map((fact) => ({ title: fact.name, value: fact.value })) },
          ],
          ...(summary.consoleUrl
            ? { actions: [{ type: 'Action.OpenUrl', title: 'Open in console', url: summary.consoleUrl }] }
            : {}),
        },
      },
    ],
  };
}

/** Discord execute-webhook: one embed, no mentions parsed whatever the text says. */
function discordPayload(summary: ChangeSummary): unknown {
  const { title, facts } = describe(summary, discordEscape);
  return {
    embeds: [
      {
        title: truncate(title, 256),
        ...(summary.consoleUrl ? { url: summary.consoleUrl } : {}),
        color: 0x5865f2,
        fields: facts.slice(0, 25).map((fact) => ({
          name: truncate(fact.name, 256),
          value: truncate(fact.value, 1024),
          inline: fact.name !== 'Environment',
        })),
        timestamp: summary.createdAt.toISOString(),
      },
    ],
    allowed_mentions: { parse: [] },
  };
}

/** The request body for the chat service (UTF-8 JSON). */
export function renderChatPayload(format: ChatFormat, summary: ChangeSummary): Buffer {
  const payload =
    format === 'chat_a' ? slackPayload(summary) : format === 'chat_b' ? teamsPayload(summary) : discordPayload(summary);
  return Buffer.from(JSON.stringify(payload), 'utf8');
}

/** Discord reports a failed post only with `wait=true`; other services take the URL as given. */
export function chatDeliveryUrl(format: ChatFormat, url: string): string {
  if (format !== 'chat_c') return url;
  const parsed = new URL(url);
  if (parsed.searchParams.get('wait') === 'true') return url;
  parsed.searchParams.set('wait', 'true');
  return parsed.toString();
}

function bodyText(body: Buffer): string {
  return body.toString('utf8').trim().slice(0, 200);
}

/** Discord's 429 body says how long to wait (seconds, fractional); the header may say it too. */
function discordRetryAfter(response: { retryAfterSeconds: number | null; body: Buffer }): number | null {
  let fromBody: number | null = null;
  try {
    const parsed = JSON.parse(response.body.toString('utf8')) as { retry_after?: unknown };
    if (typeof parsed.retry_after === 'number' && Number.isFinite(parsed.retry_after) && parsed.retry_after >= 0)
      fromBody = Math.ceil(parsed.retry_after);
  } catch {
    fromBody = null;
  }
  if (fromBody === null) return response.retryAfterSeconds;
  return Math.max(fromBody, response.retryAfterSeconds ?? 0);
}

/** Slack answers that mean the webhook (or its channel, app or workspace) is gone for good. */
const SLACK_DEAD = new Set([
  'no_service',
  'no_service_id',
  'no_team',
  'team_disabled',
  'invalid_token',
  'channel_not_found',
  'channel_is_archived',
  'action_prohibited',
  'posting_to_general_channel_denied',
  'user_not_found',
]);

/** How the engine treats the chat service's answer. */
export function classifyChatResponse(
  format: ChatFormat,
  response: { status: number; retryAfterSeconds: number | null; body: Buffer },
): ChatVerdict {
  const { status } = response;
  const service = CHAT_FORMATS[format].service;
  const said = bodyText(response.body);
  const reason = `${service} answered ${status}${said ? `: ${said}` : ''}`;
  if (status >= 200 && status < 300) return { kind: 'succeeded' };
  if (status === 429)
    return {
      kind: 'retry',
      retryAfterSeconds: format === 'chat_c' ? discordRetryAfter(response) : response.retryAfterSeconds,
      reason,
    };
  if (status === 408 || status >= 500)
    return { kind: 'retry', retryAfterSeconds: status === 503 ? response.retryAfterSeconds : null, reason };
  if (format === 'chat_a') {
    const code = said.split(/\s/)[0] ?? '';
    const dead = SLACK_DEAD.has(code) || status === 404 || status === 410 || status === 401;
    return { kind: 'failed', reason, disable: dead };
  }
  // Discord and Teams: a missing, revoked or forbidden webhook stops everything (Discord bans senders that keep
  // sending invalid requests); any other 4xx or 3xx is this payload refused, which a retry would not change.
  const dead = status === 401 || status === 403 || status === 404 || status === 410;
  return { kind: 'failed', reason, disable: dead };
}
