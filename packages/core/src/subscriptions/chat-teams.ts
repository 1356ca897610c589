// Microsoft Teams (chat_b): the incoming-webhook body, an Adaptive Card.
import type { Segment, Summary } from './chat-summary.js';

/** The most bytes Teams takes in one message. */
export const TEAMS_MAX_BYTES = 28 * 1024;

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

export function teamsPayload(summary: Summary): unknown {
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
