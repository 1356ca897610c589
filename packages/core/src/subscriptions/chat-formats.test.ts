import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  chatDeliveryUrl,
  classifyChatResponse,
  neutraliseMentions,
  renderChatPayload,
  type ChangeSummary,
  type ChatFormat,
} from './chat-formats.js';

/**
 * Each service's incoming-webhook schema and limits, written from its documentation (docs/event-subscription-chat-
 * formats.md), checked against what we render from the largest inputs the API accepts.
 */
const chars = (max: number) => z.string().refine((s) => [...s].length <= max, `at most ${max} characters`);
const slackText = (max: number) =>
  z.strictObject({ type: z.literal('plain_text'), text: chars(max).min(1), emoji: z.boolean() });
const SlackPayload = z.strictObject({
  text: chars(40_000).min(1),
  blocks: z
    .array(
      z.union([
        z.strictObject({ type: z.literal('header'), text: slackText(150) }),
        z.strictObject({ type: z.literal('section'), fields: z.array(slackText(2000)).min(1).max(10) }),
        z.strictObject({
          type: z.literal('actions'),
          elements: z
            .array(z.strictObject({ type: z.literal('button'), text: slackText(75), url: chars(3000).url() }))
            .max(25),
        }),
      ]),
    )
    .max(50),
});
const DiscordPayload = z
  .strictObject({
    content: chars(2000).optional(),
    embeds: z
      .array(
        z.strictObject({
          title: chars(256),
          url: z.string().url().optional(),
          color: z.number().int().min(0).max(0xffffff),
          fields: z
            .array(z.strictObject({ name: chars(256).min(1), value: chars(1024).min(1), inline: z.boolean() }))
            .max(25),
          timestamp: z.string().datetime(),
        }),
      )
      .max(10),
    allowed_mentions: z.strictObject({ parse: z.array(z.string()).length(0) }),
  })
  .refine(
    (p) =>
      p.embeds.reduce(
        (n, e) => n + [...e.title].length + e.fields.reduce((m, f) => m + [...f.name].length + [...f.value].length, 0),
        0,
      ) <= 6000,
    'embeds total at most 6,000 characters',
  );
const TeamsPayload = z.strictObject({
  type: z.literal('message'),
  attachments: z
    .array(
      z.strictObject({
        contentType: z.literal('application/vnd.microsoft.card.adaptive'),
        contentUrl: z.null(),
        content: z.strictObject({
          $schema: z.literal('http://adaptivecards.io/schemas/adaptive-card.json'),
          type: z.literal('AdaptiveCard'),
          version: z.literal('1.4'),
          body: z.array(
            z.union([
              z.strictObject({
                type: z.literal('TextBlock'),
                text: z.string().min(1),
                weight: z.string(),
                size: z.string(),
                wrap: z.boolean(),
              }),
              z.strictObject({
                type: z.literal('FactSet'),
                facts: z.array(z.strictObject({ title: z.string(), value: z.string() })).min(1),
              }),
            ]),
          ),
          actions: z
            .array(z.strictObject({ type: z.literal('Action.OpenUrl'), title: z.string(), url: z.string().url() }))
            .optional(),
        }),
      }),
    )
    .length(1),
});
const SCHEMAS: Record<ChatFormat, z.ZodType> = { chat_a: SlackPayload, chat_b: TeamsPayload, chat_c: DiscordPayload };
const FORMATS: ChatFormat[] = ['chat_a', 'chat_b', 'chat_c'];

const flagChange = (extra: Partial<ChangeSummary> = {}): ChangeSummary => ({
  eventId: 'evt_06h0x1aaaaaaaaaaaaaaaaaaaa',
  type: 'feature_flags.flag.updated',
  createdAt: new Date('2026-11-24T09:30:00.000Z'),
  environment: { id: 'ffe_06h0x1bbbbbbbbbbbbbbbbbbbb', name: 'production' },
  revision: '42',
  flagKey: 'checkout.v2',
  change: 'updated',
  changedFields: ['enabled'],
  actorKeyId: 'key_06h0x1cccccccccccccccccccc',
  consoleUrl: 'https://console.example.com/feature-flags/ffe_06h0x1bbbbbbbbbbbbbbbbbbbb',
  subscriptionId: 'whe_06h0x1dddddddddddddddddddd',
  ...extra,
});

function render(format: ChatFormat, summary: ChangeSummary): { raw: string; payload: unknown } {
  const raw = renderChatPayload(format, summary).toString('utf8');
  return { raw, payload: JSON.parse(raw) };
}

describe('chat payloads', () => {
  it('match each service schema and name the flag, environment, change, revision, key and console link', () => {
    for (const format of FORMATS) {
      const { raw, payload } = render(format, flagChange());
      expect(SCHEMAS[format].safeParse(payload).error, format).toBeUndefined();
      for (const text of [
        'checkout.v2',
        'production',
        'ffe_06h0x1bbbbbbbbbbbbbbbbbbbb',
        'updated',
        '42',
        'key_06h0x1cccccccccccccccccccc',
        'https://console.example.com/feature-flags/',
      ])
        expect(raw, `${format}: ${text}`).toContain(text);
    }
  });

  it('stay within every limit with the largest names the API accepts', () => {
    const longest = flagChange({
      flagKey: 'k'.repeat(128),
      // 128 bytes of 4-byte characters and of characters that escaping doubles.
      environment: { id: 'ffe_06h0x1bbbbbbbbbbbbbbbbbbbb', name: '😀'.repeat(32) },
      changedFields: ['enabled', 'value', 'description'],
      consoleUrl: `https://console.example.com/${'p'.repeat(1500)}`,
    });
    const escaped = flagChange({ environment: { id: 'ffe_06h0x1bbbbbbbbbbbbbbbbbbbb', name: '*_~`|<>&@'.repeat(14) } });
    for (const format of FORMATS)
      for (const summary of [longest, escaped]) {
        const { raw, payload } = render(format, summary);
        expect(SCHEMAS[format].safeParse(payload).error, format).toBeUndefined();
        // Teams workflows take at most 28 KB.
        expect(Buffer.byteLength(raw)).toBeLessThan(28 * 1024);
      }
  });

  it('never let customer text mention everyone, a channel or a person', () => {
    const hostile = flagChange({
      environment: {
        id: 'ffe_06h0x1bbbbbbbbbbbbbbbbbbbb',
        name: '@everyone @here @channel <!channel> <!here> <at>Ann</at> <@123>',
      },
    });
    for (const format of FORMATS) {
      const { raw, payload } = render(format, hostile);
      expect(raw, format).not.toMatch(/@(everyone|here|channel)/);
      expect(raw, format).not.toMatch(/<!(channel|here|everyone)>/);
      expect(raw, format).not.toContain('<at>');
      expect(raw, format).not.toContain('<@123>');
      if (format === 'chat_c')
        expect((payload as { allowed_mentions: unknown }).allowed_mentions).toEqual({ parse: [] });
      // The name is still readable (zero-width spaces only).
      expect(raw.replace(/\u200b/g, ''), format).toContain('everyone');
    }
    expect(neutraliseMentions('a@b <c>')).toBe('a@\u200bb <\u200bc>');
  });

  it('escape Slack mrkdwn control characters in the fallback text and Discord markdown in embeds', () => {
    const tricky = flagChange({
      environment: { id: 'ffe_06h0x1bbbbbbbbbbbbbbbbbbbb', name: 'a&b <https://evil.example|click> *bold*' },
    });
    const slack = render('chat_a', tricky).payload as { text: string };
    expect(slack.text).toContain('a&amp;b');
    expect(slack.text).not.toContain('<https://evil.example|click>');
    const discord = render('chat_c', tricky).raw;
    expect(discord).toContain('\\\\*bold\\\\*');
  });

  it('the test event names only the subscription and the event: no flag or environment', () => {
    const test: ChangeSummary = flagChange({
      type: 'feature_flags.webhook.test',
      environment: null,
      revision: null,
      flagKey: null,
      change: null,
      changedFields: [],
      actorKeyId: null,
    });
    for (const format of FORMATS) {
      const { raw, payload } = render(format, test);
      expect(SCHEMAS[format].safeParse(payload).error, format).toBeUndefined();
      expect(raw).toContain('whe_06h0x1dddddddddddddddddddd');
      expect(raw).toContain('Test event');
      expect(raw).not.toContain('checkout.v2');
      expect(raw).not.toContain('production');
    }
  });
});

describe('chatDeliveryUrl', () => {
  it('adds wait=true to Discord URLs once, keeping the rest; others unchanged', () => {
    const discord = 'https://discord.com/api/webhooks/123/tok-en?thread_id=9';
    expect(chatDeliveryUrl('chat_c', discord)).toBe(
      'https://discord.com/api/webhooks/123/tok-en?thread_id=9&wait=true',
    );
    expect(chatDeliveryUrl('chat_c', `${discord}&wait=true`)).toBe(`${discord}&wait=true`);
    expect(chatDeliveryUrl('chat_c', 'https://discord.com/api/webhooks/1/t')).toBe(
      'https://discord.com/api/webhooks/1/t?wait=true',
    );
    const slack = 'https://hooks.slack.com/services/T0/B0/xyz';
    expect(chatDeliveryUrl('chat_a', slack)).toBe(slack);
    expect(chatDeliveryUrl('chat_b', 'https://prod.example.logic.azure.com/workflows/1?sig=a')).toBe(
      'https://prod.example.logic.azure.com/workflows/1?sig=a',
    );
  });
});

describe('classifyChatResponse', () => {
  const answer = (status: number, body = '', retryAfterSeconds: number | null = null) => ({
    status,
    retryAfterSeconds,
    body: Buffer.from(body),
  });

  it('Slack: 200 ok succeeds; 429 waits Retry-After; dead webhooks disable; payload refusals stop without disabling', () => {
    expect(classifyChatResponse('chat_a', answer(200, 'ok'))).toEqual({ kind: 'succeeded' });
    expect(classifyChatResponse('chat_a', answer(429, 'rate_limited', 30))).toMatchObject({
      kind: 'retry',
      retryAfterSeconds: 30,
    });
    expect(classifyChatResponse('chat_a', answer(500, 'rollup_error'))).toMatchObject({ kind: 'retry' });
    for (const [status, body] of [
      [404, 'no_service'],
      [410, 'channel_is_archived'],
      [403, 'action_prohibited'],
      [403, 'invalid_token'],
      [404, 'channel_not_found'],
      [400, 'no_team'],
    ] as const)
      expect(classifyChatResponse('chat_a', answer(status, body)), body).toMatchObject({
        kind: 'failed',
        disable: true,
      });
    for (const body of ['invalid_payload', 'no_text', 'too_many_attachments'])
      expect(classifyChatResponse('chat_a', answer(400, body)), body).toMatchObject({ kind: 'failed', disable: false });
    expect((classifyChatResponse('chat_a', answer(400, 'invalid_payload')) as { reason: string }).reason).toBe(
      'Slack answered 400: invalid_payload',
    );
  });

  it('Discord: 200 and 204 succeed; 429 waits the longer of retry_after (rounded up) and Retry-After; 401/403/404 disable; 400 stops', () => {
    expect(classifyChatResponse('chat_c', answer(200, '{"id":"1"}'))).toEqual({ kind: 'succeeded' });
    expect(classifyChatResponse('chat_c', answer(204))).toEqual({ kind: 'succeeded' });
    expect(classifyChatResponse('chat_c', answer(429, '{"retry_after": 64.57, "global": false}', 2))).toMatchObject({
      kind: 'retry',
      retryAfterSeconds: 65,
    });
    expect(classifyChatResponse('chat_c', answer(429, 'not json', 7))).toMatchObject({
      kind: 'retry',
      retryAfterSeconds: 7,
    });
    for (const status of [401, 403, 404])
      expect(
        classifyChatResponse('chat_c', answer(status, '{"message": "Unknown Webhook", "code": 10015}')),
      ).toMatchObject({
        kind: 'failed',
        disable: true,
      });
    expect(classifyChatResponse('chat_c', answer(400, '{"message": "Invalid Form Body"}'))).toMatchObject({
      kind: 'failed',
      disable: false,
    });
    expect(classifyChatResponse('chat_c', answer(502))).toMatchObject({ kind: 'retry' });
  });

  it('Teams: 202 and 200 succeed; 429 and 5xx retry; 400 stops; 401/403/404/410 disable; 408 retries everywhere', () => {
    expect(classifyChatResponse('chat_b', answer(202))).toEqual({ kind: 'succeeded' });
    expect(classifyChatResponse('chat_b', answer(200))).toEqual({ kind: 'succeeded' });
    expect(classifyChatResponse('chat_b', answer(429, '', 12))).toMatchObject({ kind: 'retry', retryAfterSeconds: 12 });
    expect(classifyChatResponse('chat_b', answer(503, '', 40))).toMatchObject({ kind: 'retry', retryAfterSeconds: 40 });
    expect(classifyChatResponse('chat_b', answer(400))).toMatchObject({ kind: 'failed', disable: false });
    for (const status of [401, 403, 404, 410])
      expect(classifyChatResponse('chat_b', answer(status))).toMatchObject({ kind: 'failed', disable: true });
    for (const format of FORMATS) expect(classifyChatResponse(format, answer(408))).toMatchObject({ kind: 'retry' });
    for (const format of FORMATS)
      expect(classifyChatResponse(format, answer(302))).toMatchObject({ kind: 'failed', disable: false });
  });
});
