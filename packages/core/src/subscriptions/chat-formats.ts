// Chat summaries of platform events (docs/event-subscription-chat-formats.md): the body each team-chat incoming
// webhook accepts, the URL to post it to, and what the service's answer means for the retry rules. Pure: no I/O.

import { discordDeliveryUrl, discordPayload, discordRetryAfter } from './chat-discord.js';
import { SLACK_GONE, SLACK_REFUSED, slackCode, slackPayload } from './chat-slack.js';
import { bodyText, parseJson, summarise, type ChangeSummary, type ChatResponse } from './chat-summary.js';
import { teamsPayload } from './chat-teams.js';

export { neutraliseMentions, TEST_EVENT_TYPE, type ChangeSummary } from './chat-summary.js';

export type ChatFormat = 'chat_a' | 'chat_b' | 'chat_c';

export const CHAT_FORMATS: Record<ChatFormat, { service: string }> = {
  chat_a: { service: 'Slack' },
  chat_b: { service: 'Microsoft Teams' },
  chat_c: { service: 'Discord' },
};

/** How the engine must treat the chat service's answer. */
export type ChatVerdict =
  | { kind: 'succeeded' }
  | { kind: 'retry'; retryAfterSeconds: number | null; reason: string }
  | { kind: 'failed'; reason: string; disable: boolean };

/** The request body (UTF-8 JSON bytes) for the chat service. */
export function renderChatPayload(format: ChatFormat, summary: ChangeSummary): Buffer {
  const content = summarise(summary);
  const payload =
    format === 'chat_a' ? slackPayload(content) : format === 'chat_b' ? teamsPayload(content) : discordPayload(content);
  return Buffer.from(JSON.stringify(payload), 'utf8');
}

/**
 * The URL to POST to: Discord's with exactly one `wait=true` (chat-discord.ts); other services take the URL as
 * given.
 */
export function chatDeliveryUrl(format: ChatFormat, url: string): string {
  return format === 'chat_c' ? discordDeliveryUrl(url) : url;
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

function headerRetryAfter(response: ChatResponse): number | null {
  const seconds = response.retryAfterSeconds;
  return seconds !== null && Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : null;
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
