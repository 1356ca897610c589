/** Whether an event type name matches one of an endpoint's patterns: an exact name, `<prefix>.*` or `*`. */
export function matchesEventPatterns(patterns: readonly string[], eventType: string): boolean {
  return patterns.some((pattern) => {
    if (pattern === '*') return true;
    if (pattern.endsWith('.*')) return eventType.startsWith(pattern.slice(0, -1));
    return pattern === eventType;
  });
}
