"""Tokenising helpers for the text.stats skill (version 0.9.0)."""

import re
from collections import Counter

# A word is a dotted abbreviation ("e.g.", "U.S.") or a run of letters/digits,
# optionally joined by an apostrophe or hyphen ("don't", "state-of-the-art"),
# or by "." / "," between digits ("3.14", "1,000").
WORD_RE = re.compile(
    r"(?:[^\W\d_]\.){2,}"
    r"|[^\W_]+(?:(?:['\u2019\-]|(?<=\d)[.,](?=\d))[^\W_]+)*"
)

# Terminal punctuation, optional closing quotes/brackets, then whitespace or end.
SENTENCE_END_RE = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]]*(?=\s|$)")

PARAGRAPH_BREAK_RE = re.compile(r"\r?\n[ \t]*\r?\n\s*")

# Abbreviations whose trailing period does not end a sentence.
ABBREVIATIONS = {
    "e.g", "i.e", "etc", "vs", "cf", "approx", "mr", "mrs", "ms", "dr", "prof",
    "st", "jr", "sr", "fig", "inc", "ltd", "co",
}

STOPWORDS = {
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has",
    "have", "he", "her", "his", "i", "if", "in", "into", "is", "it", "its", "not",
    "of", "on", "or", "our", "she", "so", "that", "the", "their", "them", "there",
    "they", "this", "to", "was", "we", "were", "which", "will", "with", "you", "your",
}


def words(text):
    """Return the list of words in text, in order, original case."""
    return WORD_RE.findall(text)


def paragraphs(text):
    """Blocks of text separated by blank lines (whitespace-only lines count)."""
    return [p for p in PARAGRAPH_BREAK_RE.split(text) if p.strip()]


def sentences(text):
    """Split text into sentences. Blank lines always end a sentence."""
    result = []
    for block in paragraphs(text):
        start = 0
        for match in SENTENCE_END_RE.finditer(block):
            before = block[start:match.start()].split()
            last_token = before[-1].lower() if before else ""
            if match.group().startswith(".") and last_token in ABBREVIATIONS:
                continue  # "e.g. this" or "Dr. Smith": not a sentence end
            result.append(block[start:match.end()])
            start = match.end()
        result.append(block[start:])
    return [s.strip() for s in result if WORD_RE.search(s)]


def top_words(word_list, limit):
    """Most frequent words, lowercased, ignoring common English stopwords."""
    counts = Counter(
        w.lower() for w in word_list if w.lower() not in STOPWORDS and not w.isdigit()
    )
    return [{"word": w, "count": c} for w, c in counts.most_common(limit)]


def rounded(value, places=2):
    return round(value, places) if value else 0
