"""Entrypoint of the text.stats action skill (version 0.10.0).

The runtime calls main(args) with a dict and expects a JSON-serializable dict.

    args = {"text": "...", "top": 5, "words_per_minute": 230}

New in 0.10.0: a reading-time estimate (`reading_time`) and the optional
`words_per_minute` argument that controls it.
"""

# Relative import when code/ is loaded as a package (a sandbox that mounts the
# skill and imports it as a module); plain import when code/ itself is on
# sys.path or main.py is run as a script. The relative form is tried first so
# an unrelated top-level module called "helpers" can never shadow ours.
try:
    from .helpers import paragraphs, reading_time, rounded, sentences, top_words, words
except ImportError:
    from helpers import paragraphs, reading_time, rounded, sentences, top_words, words

VERSION = "0.10.0"
DEFAULT_TOP = 5
MAX_TOP = 50
# Typical adult silent-reading speed for non-technical prose. Use a lower value
# (around 150-200) for dense technical material.
DEFAULT_WPM = 230
MIN_WPM, MAX_WPM = 50, 1000


def _read_args(args):
    if not isinstance(args, dict):
        raise TypeError(f"args must be an object, got {type(args).__name__}")
    text = args.get("text")
    if not isinstance(text, str):
        raise ValueError("'text' is required and must be a string")
    top = args.get("top", DEFAULT_TOP)
    if isinstance(top, float) and top.is_integer():
        top = int(top)  # JSON clients sometimes send 5.0
    if isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= MAX_TOP:
        raise ValueError(f"'top' must be an integer from 0 to {MAX_TOP}")
    wpm = args.get("words_per_minute", DEFAULT_WPM)
    if isinstance(wpm, float) and wpm.is_integer():
        wpm = int(wpm)
    if isinstance(wpm, bool) or not isinstance(wpm, int) or not MIN_WPM <= wpm <= MAX_WPM:
        raise ValueError(
            f"'words_per_minute' must be a whole number from {MIN_WPM} to {MAX_WPM}"
        )
    return text, top, wpm


def main(args: dict) -> dict:
    text, top, wpm = _read_args(args)

    word_list = words(text)
    sentence_list = sentences(text)
    sentence_lengths = [len(words(s)) for s in sentence_list]
    letters = [sum(ch.isalnum() for ch in w) for w in word_list]
    distinct = {w.lower() for w in word_list}

    n_words = len(word_list)
    n_sentences = len(sentence_list)

    return {
        "version": VERSION,
        "characters": len(text),
        "words": n_words,
        "unique_words": len(distinct),
        "sentences": n_sentences,
        "paragraphs": len(paragraphs(text)),
        "avg_words_per_sentence": rounded(n_words / n_sentences if n_sentences else 0),
        "avg_word_length": rounded(sum(letters) / n_words if n_words else 0),
        "longest_sentence_words": max(sentence_lengths, default=0),
        "lexical_diversity": rounded(len(distinct) / n_words if n_words else 0, 3),
        "top_words": top_words(word_list, top),
        "reading_time": reading_time(n_words, wpm),
    }


if __name__ == "__main__":
    import json
    import sys

    raw = sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read()
    try:
        print(json.dumps(main(json.loads(raw)), indent=2, ensure_ascii=False))
    except (ValueError, TypeError) as exc:
        print(f"text.stats: error: {exc}", file=sys.stderr)
        sys.exit(1)
