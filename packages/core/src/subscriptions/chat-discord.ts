// Discord (chat_c): the execute-webhook body, the URL to post it to, and Discord's rate-limit answer.
import { parseJson, truncate, type ChatResponse, type Segment, type Summary } from './chat-summary.js';

/** Discord's limits (characters are counted in UTF-16 code units, which is never fewer than code points). */
export const DISCORD_LIMITS = {
  content: 2_000,
  title: 256,
  description: 4_096,
  fieldName: 256,
  fieldValue: 1_024,
  fields: 25,
  embedTotal: 6_000,
} as const;

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
export function discordPayload(summary: Summary): unknown {
  const limits = DISCORD_LIMITS;
  const embed = {
    title: truncate(discordMarkdown(summary.title), limits.title),
    fields: summary.facts.slice(0, limits.fields).map((fact) => ({
      name: truncate(fact.name, limits.fieldName),
      value: truncate(discordMarkdown(fact.value), limits.fieldValue),
      inline: fact.name !== 'Environment' && fact.name !== 'Changed fields',
    })),
  };
  // Never reached with the capped inputs; kept so that no input can exceed the per-message total.
  while (embedLength(embed) > DISCORD_LIMITS.embedTotal && embed.fields.length > 0) embed.fields.pop();
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

function parameterName(parameter: string): string {
  const name = parameter.split('=', 1)[0] ?? '';
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

/**
 * Discord answers an execute-webhook request before it has saved the message unless the query says `wait=true`
 * (and then reports no failure), so the URL gets exactly one `wait=true`: an existing `wait` parameter is set to
 * true in place, later duplicates dropped; every other part and parameter is kept byte for byte.
 */
export function discordDeliveryUrl(url: string): string {
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

/** Discord's 429 body has `retry_after` (seconds, fractional); wait the longer of it and Retry-After, rounded up. */
export function discordRetryAfter(response: ChatResponse): number | null {
  const json = parseJson(response.body);
  const fromBody = json?.['retry_after'];
  const candidates = [response.retryAfterSeconds, typeof fromBody === 'number' ? fromBody : null].filter(
    (seconds): seconds is number => seconds !== null && Number.isFinite(seconds) && seconds >= 0,
  );
  return candidates.length === 0 ? null : Math.ceil(Math.max(...candidates));
}
