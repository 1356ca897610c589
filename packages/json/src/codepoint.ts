// String order for filters and transforms. JS's `<` compares UTF-16 code units, which puts U+10000 and above before
// U+E000..U+FFFF; these follow Unicode code points instead. A lone surrogate counts as its own value, as
// String.prototype.codePointAt reads it.

/** Orders two strings by their sequences of code points; a proper prefix comes first. */
export function compareCodePoints(a: string, b: string): -1 | 0 | 1 {
  let index = 0;
  while (index < a.length && index < b.length) {
    const left = a.codePointAt(index)!;
    const right = b.codePointAt(index)!;
    if (left !== right) return left < right ? -1 : 1;
    // Equal code points have equal lengths, so one index walks both strings.
    index += left > 0xffff ? 2 : 1;
  }
  if (a.length === b.length) return 0;
  return a.length < b.length ? -1 : 1;
}

/** Whether the code points of `text` begin with those of `prefix`: a lone high surrogate does not match half a pair. */
export function startsWithCodePoints(text: string, prefix: string): boolean {
  if (!text.startsWith(prefix)) return false;
  return !(isHighSurrogate(prefix.charCodeAt(prefix.length - 1)) && isLowSurrogate(text.charCodeAt(prefix.length)));
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
