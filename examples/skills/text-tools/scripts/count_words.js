// Skill Tools handler for `count_words` (ESM, default-exported async function).
//
// Input:  { text: string, __workDir?: string }
// Output: { words, lines, chars, chars_no_spaces, sentences, paragraphs }
//
// Counting rules:
//   words       runs of non-whitespace characters
//   lines       "" -> 0; otherwise newline count + 1, ignoring one trailing newline
//   chars       Unicode code points (an emoji counts as 1, not 2 UTF-16 units)
//   sentences   runs of text ending in . ! ? (or the end of the text)
//   paragraphs  blocks separated by one or more blank lines

export default async function handler(args) {
  const text = args?.text;
  if (typeof text !== "string") {
    throw new TypeError(
      `count_words: 'text' must be a string, got ${text === null ? "null" : typeof text}`,
    );
  }

  const normalized = text.replace(/\r\n?/g, "\n");
  const codePoints = Array.from(normalized);

  const words = normalized.split(/\s+/u).filter(Boolean).length;

  let lines = 0;
  if (normalized.length > 0) {
    const body = normalized.endsWith("\n") ? normalized.slice(0, -1) : normalized;
    lines = body.split("\n").length;
  }

  const charsNoSpaces = codePoints.filter((c) => !/\s/u.test(c)).length;

  // A sentence is a stretch that contains at least one letter or digit and
  // ends at terminal punctuation (possibly repeated, e.g. "?!" or "...").
  const sentences = normalized
    .split(/[.!?\u3002\uff01\uff1f]+(?=\s|$)/u)
    .filter((s) => /[\p{L}\p{N}]/u.test(s)).length;

  const paragraphs = normalized
    .split(/\n\s*\n/u)
    .filter((p) => p.trim().length > 0).length;

  return {
    words,
    lines,
    chars: codePoints.length,
    chars_no_spaces: charsNoSpaces,
    sentences,
    paragraphs,
  };
}
