// Slack (chat_a): the incoming-webhook body and how to read Slack's answers.
import { plain, truncate, type Segment, type Summary } from './chat-summary.js';

/** Slack's limits (characters are counted in UTF-16 code units, which is never fewer than code points). */
export const SLACK_LIMITS = {
  text: 40_000,
  sectionText: 3_000,
  fieldText: 2_000,
  fields: 10,
  header: 150,
  buttonText: 75,
  url: 3_000,
  blocks: 50,
} as const;

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
export function slackPayload(summary: Summary): unknown {
  const limits = SLACK_LIMITS;
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

/** Slack answers that mean the webhook, its channel or its workspace is gone: disable the subscription. */
export const SLACK_GONE = new Set([
  'no_service',
  'no_service_id',
  'no_team',
  'team_disabled',
  'invalid_token',
  'channel_not_found',
  'channel_is_archived',
]);

/** Slack answers that refuse this message (or posting in this context) but leave the webhook itself alive. */
export const SLACK_REFUSED = new Set([
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

/** Slack's short answer (`no_service`, `invalid_payload`, ...), lower-case letters and underscores. */
export function slackCode(body: Buffer): string {
  return /^[a-z_]+/.exec(body.toString('utf8').trim())?.[0] ?? '';
}
