import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CHAT_FORMATS,
  chatDeliveryUrl,
  classifyChatResponse,
  neutraliseMentions,
  renderChatPayload,
  type ChangeSummary,
  type ChatFormat,
} from './chat-formats.js';

// Each service's incoming-webhook schema and limits (docs/event-subscription-chat-formats.md, "Limits"), checked
// against what we render. Lengths are checked both in UTF-16 code units and in code points.
const within = (max: number) =>
  z
    .string()
    .min(1)
    .refine((s) => s.length <= max && [...s].length <= max, `at most ${max} characters`);
const httpUrl = (max: number) =>
  within(max).refine((s) => /^https?:$/.test(new URL(s).protocol), 'an absolute http(s) URL');

const SlackPlainText = (max: number) =>
  z.strictObject({ type: z.literal('plain_text'), text: within(max), emoji: z.literal(false) });
const SlackPayload = z.strictObject({
  text: within(40_000).refine((s) => s.length <= 3_000, 'the fallback stays short'),
  blocks: z
    .array(
      z.discriminatedUnion('type', [
        z.strictObject({ type: z.literal('header'), text: SlackPlainText(150) }),
        z.strictObject({ type: z.literal('section'), fields: z.array(SlackPlainText(2_000)).min(1).max(10) }),
        z.strictObject({
          type: z.literal('actions'),
          elements: z
            .array(z.strictObject({ type: z.literal('button'), text: SlackPlainText(75), url: httpUrl(3_000) }))
            .min(1)
            .max(25),
        }),
      ]),
    )
    .min(1)
    .max(50),
});

const TextRun = z.strictObject({
  type: z.literal('TextRun'),
  text: z.string().min(1),
  size: z.literal('Medium').optional(),
  weight: z.literal('Bolder').optional(),
  fontType: z.literal('Monospace').optional(),
});
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
          // Only RichTextBlocks of TextRuns: Markdown is never parsed in a TextRun.
          body: z
            .array(
              z.strictObject({
                type: z.literal('RichTextBlock'),
                separator: z.literal(true).optional(),
                spacing: z.literal('Small').optional(),
                inlines: z.array(TextRun).min(1),
              }),
            )
            .min(1),
          actions: z
            .array(z.strictObject({ type: z.literal('Action.OpenUrl'), title: z.string().min(1), url: httpUrl(2_048) }))
            .length(1)
            .optional(),
        }),
      }),
    )
    .length(1),
});

const DiscordPayload = z
  .strictObject({
    content: within(2_000).optional(),
    embeds: z
      .array(
        z.strictObject({
          title: within(256),
          description: within(4_096).optional(),
          url: httpUrl(2_048).optional(),
          color: z.number().int().min(0).max(0xffffff),
          fields: z.array(z.strictObject({ name: within(256), value: within(1_024), inline: z.boolean() })).max(25),
          timestamp: z.iso.datetime(),
        }),
      )
      .length(1),
    allowed_mentions: z.strictObject({ parse: z.tuple([]) }),
  })
  .refine(
    (payload) =>
      payload.embeds.reduce(
        (total, embed) =>
          total +
          embed.title.length +
          (embed.description?.length ?? 0) +
          embed.fields.reduce((sum, field) => sum + field.name.length + field.value.length, 0),
        0,
      ) <= 6_000,
    'the embeds total at most 6,000 characters',
  );

const SCHEMAS: Record<ChatFormat, z.ZodType> = { chat_a: SlackPayload, chat_b: TeamsPayload, chat_c: DiscordPayload };
const FORMATS = Object.keys(CHAT_FORMATS) as ChatFormat[];

const ENV_ID = 'ffe_06h0x1bbbbbbbbbbbbbbbbbbbb';
const flagChange = (extra: Partial<ChangeSummary> = {}): ChangeSummary => ({
  eventId: 'evt_06h0x1aaaaaaaaaaaaaaaaaaaa',
  type: 'feature_flags.flag.updated',
  createdAt: new Date('2026-11-24T09:30:00.000Z'),
  environment: { id: ENV_ID, name: 'production' },
  revision: '42',
  flagKey: 'checkout.v2',
  change: 'updated',
  changedFields: ['enabled', 'value'],
  actorKeyId: 'key_06h0x1cccccccccccccccccccc',
  consoleUrl: `https://console.example.com/feature-flags/${ENV_ID}`,
  subscriptionId: 'whe_06h0x1dddddddddddddddddddd',
  ...extra,
});
const testEvent = (extra: Partial<ChangeSummary> = {}): ChangeSummary =>
  flagChange({
    type: 'feature_flags.webhook.test',
    environment: null,
    revision: null,
    flagKey: null,
    change: null,
    changedFields: [],
    actorKeyId: null,
    consoleUrl: null,
    ...extra,
  });

interface Rendered {
  bytes: Buffer;
  payload: unknown;
  /** Every string in the payload, keys excluded. */
  strings: string[];
}

function collectStrings(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, into);
  else if (typeof value === 'object' && value !== null)
    for (const item of Object.values(value)) collectStrings(item, into);
  return into;
}

function render(format: ChatFormat, summary: ChangeSummary): Rendered {
  const bytes = renderChatPayload(format, summary);
  const payload: unknown = JSON.parse(bytes.toString('utf8'));
  const result = SCHEMAS[format].safeParse(payload);
  expect(result.error, `${format} schema`).toBeUndefined();
  // Teams workflows take at most 28 KB per message; we hold every format to it.
  expect(bytes.length, `${format} bytes`).toBeLessThanOrEqual(28 * 1024);
  return { bytes, payload, strings: collectStrings(payload) };
}

const text = (rendered: Rendered) => rendered.strings.join('\n');
const slack = (summary: ChangeSummary) => render('chat_a', summary).payload as z.infer<typeof SlackPayload>;
const teams = (summary: ChangeSummary) => render('chat_b', summary).payload as z.infer<typeof TeamsPayload>;
const discord = (summary: ChangeSummary) => render('chat_c', summary).payload as z.infer<typeof DiscordPayload>;

describe('CHAT_FORMATS', () => {
  it('names the service behind each chat format', () => {
    expect(CHAT_FORMATS).toEqual({
      chat_a: { service: 'Slack' },
      chat_b: { service: 'Microsoft Teams' },
      chat_c: { service: 'Discord' },
    });
  });
});

describe('renderChatPayload', () => {
  it('every format names the flag, environment, change, changed fields, revision, key, event, time and links the console', () => {
    for (const format of FORMATS) {
      const all = text(render(format, flagChange()));
      for (const expected of [
        'checkout.v2',
        'production',
        ENV_ID,
        'updated',
        'enabled, value',
        '42',
        'key_06h0x1cccccccccccccccccccc',
        'evt_06h0x1aaaaaaaaaaaaaaaaaaaa',
        '2026-11-24T09:30:00.000Z',
        `https://console.example.com/feature-flags/${ENV_ID}`,
      ])
        expect(all, `${format}: ${expected}`).toContain(expected);
    }
  });

  it('Slack: a mrkdwn fallback with the key in code, a header, plain-text fields and a console button', () => {
    const payload = slack(flagChange());
    expect(payload.text).toBe('Feature flag `checkout.v2` updated in production');
    expect(payload.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: 'Feature flag checkout.v2 updated in production', emoji: false },
    });
    expect(payload.blocks[1]).toMatchObject({
      type: 'section',
      fields: expect.arrayContaining([
        { type: 'plain_text', text: 'Flag: checkout.v2', emoji: false },
        { type: 'plain_text', text: `Environment: production (${ENV_ID})`, emoji: false },
        { type: 'plain_text', text: 'Changed fields: enabled, value', emoji: false },
        { type: 'plain_text', text: 'By key: key_06h0x1cccccccccccccccccccc', emoji: false },
      ]),
    });
    expect(payload.blocks[2]).toEqual({
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: 'Open in console', emoji: false },
          url: `https://console.example.com/feature-flags/${ENV_ID}`,
        },
      ],
    });
  });

  it('Teams: one Adaptive Card 1.4 in the message envelope, the key in monospace, an Open URL action', () => {
    const card = teams(flagChange()).attachments[0]!.content;
    expect(card.body[0]!.inlines.map((run) => run.text).join('')).toBe(
      'Feature flag checkout.v2 updated in production',
    );
    expect(card.body[0]!.inlines).toContainEqual({
      type: 'TextRun',
      text: 'checkout.v2',
      size: 'Medium',
      weight: 'Bolder',
      fontType: 'Monospace',
    });
    expect(card.body.map((line) => line.inlines.map((run) => run.text).join(''))).toContain(
      `Environment: production (${ENV_ID})`,
    );
    expect(card.actions).toEqual([
      { type: 'Action.OpenUrl', title: 'Open in console', url: `https://console.example.com/feature-flags/${ENV_ID}` },
    ]);
  });

  it('Discord: one embed linking the console, the event time as its timestamp, no content, no mentions parsed', () => {
    const payload = discord(flagChange());
    expect(payload.content).toBeUndefined();
    expect(payload.allowed_mentions).toEqual({ parse: [] });
    const embed = payload.embeds[0]!;
    expect(embed.title).toBe('Feature flag `checkout.v2` updated in production');
    expect(embed.url).toBe(`https://console.example.com/feature-flags/${ENV_ID}`);
    expect(embed.timestamp).toBe('2026-11-24T09:30:00.000Z');
    expect(embed.fields).toContainEqual({ name: 'Flag', value: '`checkout.v2`', inline: true });
    expect(embed.fields).toContainEqual({ name: 'Environment', value: `production (\`${ENV_ID}\`)`, inline: false });
    expect(embed.fields).toContainEqual({ name: 'Revision', value: '42', inline: true });
  });

  it('no link without a console URL, or with one that is not an absolute http(s) URL of at most 2,048 characters', () => {
    for (const consoleUrl of [
      null,
      'javascript:alert(1)',
      '/feature-flags/x',
      `https://console.example.com/${'p'.repeat(2_100)}`,
    ]) {
      const summary = flagChange({ consoleUrl });
      expect(slack(summary).blocks.map((block) => block.type)).toEqual(['header', 'section']);
      expect(teams(summary).attachments[0]!.content.actions).toBeUndefined();
      expect(discord(summary).embeds[0]!.url).toBeUndefined();
    }
  });

  it('stays within every limit with the largest inputs the API accepts, and with oversized ones', () => {
    const accepted = [
      // Flag keys: 128 characters; environment names: 128 UTF-8 bytes (of 4-byte characters, of characters that
      // escaping doubles, of 2-byte characters).
      flagChange({ flagKey: `${'k'.repeat(127)}_`, environment: { id: ENV_ID, name: '😀'.repeat(32) } }),
      flagChange({ flagKey: '-'.repeat(128), environment: { id: ENV_ID, name: '*_~`|<>&@[]()#-\\'.repeat(8) } }),
      flagChange({ flagKey: 'a.b'.repeat(42), environment: { id: ENV_ID, name: 'é'.repeat(64) } }),
    ];
    const oversized = flagChange({
      flagKey: 'x'.repeat(5_000),
      environment: { id: `ffe_${'b'.repeat(500)}`, name: '[@everyone](x)'.repeat(700) },
      revision: '9'.repeat(300),
      changedFields: Array.from({ length: 500 }, (_, i) => `field_${i}_${'f'.repeat(40)}`),
      actorKeyId: `key_${'c'.repeat(500)}`,
      eventId: `evt_${'a'.repeat(500)}`,
      subscriptionId: `whe_${'d'.repeat(500)}`,
      consoleUrl: `https://console.example.com/${'p'.repeat(2_000)}`,
    });
    for (const format of FORMATS)
      for (const summary of [...accepted, oversized, testEvent({ subscriptionId: `whe_${'d'.repeat(5_000)}` })])
        render(format, summary); // schema, limits and 28 KB are checked in render()

    // Accepted inputs are never cut where the limits leave room: the full key and name are shown.
    for (const summary of accepted) {
      const key = summary.flagKey!;
      expect(text(render('chat_a', summary))).toContain(`Flag: ${key}`);
      expect(text(render('chat_b', summary))).toContain(key);
      expect(text(render('chat_c', summary))).toContain(`\`${key}\``);
    }
    expect(text(render('chat_b', accepted[0]!))).toContain('😀'.repeat(32));
  });

  it('customer text in a flag key or environment name cannot mention everyone, a channel, a role or a person', () => {
    const hostile = '@everyone @here @channel <!channel> <!here> <!everyone> <at>Ann</at> <@123> <@&456> <#C1>';
    const summaries = [
      flagChange({ environment: { id: ENV_ID, name: hostile } }),
      flagChange({ flagKey: hostile }), // not a valid key, but the renderer does not rely on validation
      flagChange({ changedFields: [hostile] }),
    ];
    for (const format of FORMATS)
      for (const summary of summaries) {
        const rendered = render(format, summary);
        const all = text(rendered);
        expect(all, format).not.toMatch(/@(everyone|here|channel)/);
        expect(all, format).not.toMatch(/<!|<@|<#|<at>/);
        expect(all, format).not.toMatch(/&lt;(!|@|#|at&gt;)/);
        expect(rendered.bytes.toString('utf8'), format).not.toContain('msteams');
        // Still readable: only zero-width spaces were added.
        expect(all.replace(/\u200b/g, ''), format).toMatch(/everyone|&lt;!channel&gt;/);
      }
    for (const summary of summaries) expect(discord(summary).allowed_mentions).toEqual({ parse: [] });
    expect(neutraliseMentions('a@b <c>')).toBe('a@\u200bb <\u200bc>');
  });

  it('customer text cannot make a link or markup: Slack escapes & < >, Discord escapes markdown, Teams never parses it', () => {
    const name = 'a&b <https://evil.example|click> [click](https://evil.example) *bold* `code`';
    const summary = flagChange({ environment: { id: ENV_ID, name } });

    const slackPayload = slack(summary);
    expect(slackPayload.text).toContain('a&amp;b &lt;\u200bhttps://evil.example|click&gt;');
    expect(slackPayload.text).not.toMatch(/<https?:/);
    // Blocks carry customer text only in plain_text objects (the schema allows no mrkdwn).

    const embed = discord(summary).embeds[0]!;
    const environment = embed.fields.find((field) => field.name === 'Environment')!.value;
    expect(environment).toContain('\\[click\\]\\(https://evil.example\\)');
    expect(environment).toContain('\\*bold\\*');
    expect(environment).toContain('\\`code\\`');
    expect(embed.title).not.toMatch(/(^|[^\\])\[click\]\(/);

    // Teams: the schema admits only RichTextBlock/TextRun, where Adaptive Cards render text literally.
    const card = teams(summary).attachments[0]!.content;
    expect(card.body.flatMap((line) => line.inlines.map((run) => run.text))).toContain(
      'a&b <\u200bhttps://evil.example|click> [click](https://evil.example) *bold* `code`',
    );
  });

  it('customer text stays on one line and cannot reverse the text around it', () => {
    const summary = flagChange({
      environment: { id: ENV_ID, name: 'prod\n\n*injected*\r\u2028line\u202eesrever\u0000' },
    });
    for (const format of FORMATS) {
      const all = render(format, summary).strings;
      for (const value of all) expect(value, format).not.toMatch(/[\p{Cc}\u2028\u202e]/u);
      expect(all.join(' '), format).toMatch(/prod/);
    }
  });

  it('the test event names the subscription and event only, whatever else the summary carries', () => {
    const leaky = testEvent({
      environment: { id: ENV_ID, name: 'production' },
      flagKey: 'checkout.v2',
      change: 'updated',
      changedFields: ['value'],
      revision: '42',
      actorKeyId: 'key_06h0x1cccccccccccccccccccc',
    });
    for (const format of FORMATS)
      for (const summary of [testEvent(), leaky]) {
        const all = text(render(format, summary));
        expect(all, format).toContain('whe_06h0x1dddddddddddddddddddd');
        expect(all, format).toContain('evt_06h0x1aaaaaaaaaaaaaaaaaaaa');
        for (const value of ['checkout.v2', 'production', ENV_ID, 'key_06h0x1', 'Revision', 'Flag'])
          expect(all, `${format}: ${value}`).not.toContain(value);
      }
    expect(slack(testEvent()).text).toBe('Test event for subscription `whe_06h0x1dddddddddddddddddddd`');
    expect(discord(testEvent()).embeds[0]!.title).toBe('Test event for subscription `whe_06h0x1dddddddddddddddddddd`');
    expect(
      teams(testEvent())
        .attachments[0]!.content.body[0]!.inlines.map((run) => run.text)
        .join(''),
    ).toBe('Test event for subscription whe_06h0x1dddddddddddddddddddd');
  });

  it('says "changed" when the kind of change is unknown and omits what the summary lacks', () => {
    const summary = flagChange({ change: null, changedFields: [], revision: null, actorKeyId: null });
    expect(slack(summary).text).toBe('Feature flag `checkout.v2` changed in production');
    const names = discord(summary).embeds[0]!.fields.map((field) => field.name);
    expect(names).toEqual(['Flag', 'Environment', 'Change', 'Event', 'Time']);
  });
});

describe('chatDeliveryUrl', () => {
  const hook = 'https://discord.com/api/webhooks/123/tok-en';

  it('adds wait=true to a Discord URL once, keeping every other parameter and part byte for byte', () => {
    expect(chatDeliveryUrl('chat_c', hook)).toBe(`${hook}?wait=true`);
    expect(chatDeliveryUrl('chat_c', `${hook}?`)).toBe(`${hook}?wait=true`);
    expect(chatDeliveryUrl('chat_c', `${hook}?thread_id=9`)).toBe(`${hook}?thread_id=9&wait=true`);
    expect(chatDeliveryUrl('chat_c', `${hook}?a=%7E%20b+c&thread_id=9#frag`)).toBe(
      `${hook}?a=%7E%20b+c&thread_id=9&wait=true#frag`,
    );
  });

  it('never adds wait twice: an existing wait is set to true in place, duplicates dropped', () => {
    expect(chatDeliveryUrl('chat_c', `${hook}?wait=true`)).toBe(`${hook}?wait=true`);
    expect(chatDeliveryUrl('chat_c', `${hook}?wait=true&thread_id=9`)).toBe(`${hook}?wait=true&thread_id=9`);
    expect(chatDeliveryUrl('chat_c', `${hook}?wait=false&thread_id=9`)).toBe(`${hook}?wait=true&thread_id=9`);
    expect(chatDeliveryUrl('chat_c', `${hook}?wai%74=0&x=1&wait=1`)).toBe(`${hook}?wait=true&x=1`);
    const once = chatDeliveryUrl('chat_c', `${hook}?thread_id=9`);
    expect(chatDeliveryUrl('chat_c', once)).toBe(once);
    expect(new URL(once).searchParams.getAll('wait')).toEqual(['true']);
  });

  it('leaves Slack and Teams URLs as given', () => {
    const slackUrl = 'https://hooks.slack.com/services/T0/B0/xyz';
    const teamsUrl =
      'https://prod-01.westus.logic.azure.com/workflows/1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=a%2Fb';
    expect(chatDeliveryUrl('chat_a', slackUrl)).toBe(slackUrl);
    expect(chatDeliveryUrl('chat_b', teamsUrl)).toBe(teamsUrl);
  });
});

describe('classifyChatResponse', () => {
  const answer = (status: number, body = '', retryAfterSeconds: number | null = null) => ({
    status,
    retryAfterSeconds,
    body: Buffer.from(body),
  });
  const verdict = (format: ChatFormat, status: number, body = '', retryAfterSeconds: number | null = null) =>
    classifyChatResponse(format, answer(status, body, retryAfterSeconds));

  describe('Slack', () => {
    it('200 ok succeeds', () => {
      expect(verdict('chat_a', 200, 'ok')).toEqual({ kind: 'succeeded' });
      expect(verdict('chat_a', 200, '')).toEqual({ kind: 'succeeded' });
    });

    it('429 retries after Retry-After; 5xx and 408 retry', () => {
      expect(verdict('chat_a', 429, 'rate_limited', 30)).toEqual({
        kind: 'retry',
        retryAfterSeconds: 30,
        reason: 'Slack answered 429: rate_limited',
      });
      expect(verdict('chat_a', 429, '')).toMatchObject({ kind: 'retry', retryAfterSeconds: null });
      expect(verdict('chat_a', 500, 'rollup_error')).toMatchObject({ kind: 'retry', retryAfterSeconds: null });
      expect(verdict('chat_a', 503, '', 20)).toMatchObject({ kind: 'retry', retryAfterSeconds: 20 });
      expect(verdict('chat_a', 408)).toMatchObject({ kind: 'retry' });
    });

    it('a dead or revoked webhook stops and disables the subscription', () => {
      for (const [status, body] of [
        [404, 'no_service'],
        [404, 'channel_not_found'],
        [410, 'channel_is_archived'],
        [403, 'invalid_token'],
        [403, 'team_disabled'],
        [403, 'no_service'],
        [403, 'channel_not_found'],
        [403, 'channel_is_archived'],
        [400, 'no_team'],
        [400, 'no_service_id'],
        [401, ''],
        [404, '<html>Not Found</html>'],
        [410, ''],
      ] as const)
        expect(verdict('chat_a', status, body), `${status} ${body}`).toMatchObject({ kind: 'failed', disable: true });
    });

    it('a refused payload or a posting restriction stops this event without disabling', () => {
      for (const [status, body] of [
        [400, 'invalid_payload'],
        [400, 'no_text'],
        [400, 'user_not_found'],
        [400, 'too_many_attachments'],
        [400, 'invalid_blocks'],
        [403, 'action_prohibited'],
        [403, 'posting_to_general_channel_denied'],
        [403, ''],
        [413, ''],
        [405, ''],
      ] as const)
        expect(verdict('chat_a', status, body), `${status} ${body}`).toMatchObject({ kind: 'failed', disable: false });
      expect(verdict('chat_a', 400, 'invalid_payload')).toEqual({
        kind: 'failed',
        reason: 'Slack answered 400: invalid_payload',
        disable: false,
      });
    });

    it('an error word in a 2xx body is not a success', () => {
      expect(verdict('chat_a', 200, 'no_service')).toMatchObject({ kind: 'failed', disable: true });
      expect(verdict('chat_a', 200, 'invalid_payload')).toMatchObject({ kind: 'failed', disable: false });
    });
  });

  describe('Discord', () => {
    it('200 (the message, with wait=true) and 204 succeed', () => {
      expect(verdict('chat_c', 200, '{"id":"1","type":0}')).toEqual({ kind: 'succeeded' });
      expect(verdict('chat_c', 204)).toEqual({ kind: 'succeeded' });
    });

    it('429 waits the longer of the body retry_after and Retry-After, rounded up', () => {
      const limited = '{"message": "You are being rate limited.", "retry_after": 64.57, "global": false}';
      expect(verdict('chat_c', 429, limited, 2)).toEqual({
        kind: 'retry',
        retryAfterSeconds: 65,
        reason: 'Discord answered 429: You are being rate limited.',
      });
      expect(verdict('chat_c', 429, '{"retry_after": 0.3}', 120)).toMatchObject({ retryAfterSeconds: 120 });
      expect(verdict('chat_c', 429, '{"retry_after": 0.3}')).toMatchObject({ retryAfterSeconds: 1 });
      expect(verdict('chat_c', 429, '<html>error code: 1015</html>', 7)).toMatchObject({ retryAfterSeconds: 7 });
      expect(verdict('chat_c', 429, '', 1.2)).toMatchObject({ retryAfterSeconds: 2 });
      expect(verdict('chat_c', 429, '{"retry_after": "soon"}')).toMatchObject({ retryAfterSeconds: null });
    });

    it('5xx and 408 retry', () => {
      for (const status of [500, 502, 503, 504, 408])
        expect(verdict('chat_c', status), String(status)).toMatchObject({ kind: 'retry' });
    });

    it('401, 403 and 404 (Unknown Webhook) disable: Discord bans senders that keep getting them', () => {
      expect(verdict('chat_c', 404, '{"message": "Unknown Webhook", "code": 10015}')).toEqual({
        kind: 'failed',
        reason: 'Discord answered 404: Unknown Webhook (code 10015)',
        disable: true,
      });
      expect(verdict('chat_c', 401, '{"message": "Invalid Webhook Token", "code": 50027}')).toMatchObject({
        kind: 'failed',
        disable: true,
      });
      expect(verdict('chat_c', 403, '{"message": "Missing Access", "code": 50001}')).toMatchObject({
        kind: 'failed',
        disable: true,
      });
      expect(verdict('chat_c', 410)).toMatchObject({ kind: 'failed', disable: true });
    });

    it('400 (Invalid Form Body) and other 4xx stop this event without disabling', () => {
      expect(verdict('chat_c', 400, '{"message": "Invalid Form Body", "code": 50035}')).toEqual({
        kind: 'failed',
        reason: 'Discord answered 400: Invalid Form Body (code 50035)',
        disable: false,
      });
      for (const status of [405, 413, 415])
        expect(verdict('chat_c', status), String(status)).toMatchObject({ kind: 'failed', disable: false });
    });
  });

  describe('Microsoft Teams', () => {
    it('202 Accepted and 200 succeed', () => {
      expect(verdict('chat_b', 202)).toEqual({ kind: 'succeeded' });
      expect(verdict('chat_b', 200)).toEqual({ kind: 'succeeded' });
    });

    it('429 waits Retry-After; 5xx and 408 retry', () => {
      expect(verdict('chat_b', 429, '', 12)).toMatchObject({ kind: 'retry', retryAfterSeconds: 12 });
      expect(verdict('chat_b', 503, '', 40)).toMatchObject({ kind: 'retry', retryAfterSeconds: 40 });
      expect(verdict('chat_b', 500)).toMatchObject({ kind: 'retry', retryAfterSeconds: null });
      expect(verdict('chat_b', 408)).toMatchObject({ kind: 'retry' });
    });

    it('400 stops this event; 401, 403, 404 and 410 disable', () => {
      expect(
        verdict('chat_b', 400, '{"error":{"code":"InvalidRequestContent","message":"The input body is not valid."}}'),
      ).toEqual({
        kind: 'failed',
        reason: 'Microsoft Teams answered 400: The input body is not valid. (code InvalidRequestContent)',
        disable: false,
      });
      for (const status of [401, 403, 404, 410])
        expect(verdict('chat_b', status), String(status)).toMatchObject({ kind: 'failed', disable: true });
      for (const status of [405, 409, 413])
        expect(verdict('chat_b', status), String(status)).toMatchObject({ kind: 'failed', disable: false });
    });
  });

  it('every format: a redirect is not followed and stops this event without disabling', () => {
    for (const format of FORMATS)
      for (const status of [301, 302, 307, 308])
        expect(verdict(format, status), `${format} ${status}`).toMatchObject({ kind: 'failed', disable: false });
  });

  it('the reason keeps one printable line of at most 200 characters of the answer', () => {
    const result = verdict('chat_a', 400, `invalid_payload\n\u0000${'x'.repeat(500)}`);
    expect(result.kind).toBe('failed');
    const reason = (result as { reason: string }).reason;
    expect(reason).toMatch(/^Slack answered 400: invalid_payload x+$/);
    expect(reason.length).toBeLessThanOrEqual('Slack answered 400: '.length + 200);
    expect(verdict('chat_b', 404)).toEqual({ kind: 'failed', reason: 'Microsoft Teams answered 404', disable: true });
  });
});
