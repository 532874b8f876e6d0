#!/usr/bin/env python3
"""Count the words, lines and characters of a text and print them as JSON.

    python3 scripts/example.py TEXT...
    echo "some text" | python3 scripts/example.py

Prints {"words": N, "lines": N, "characters": N} on stdout. Without a text it
prints a message on stderr and exits 2.{{usage}}
"""

import json
import sys


def count(text):
    """The counts of one text: words are runs of non-space characters."""
    return {
        "words": len(text.split()),
        "lines": len(text.splitlines()),
        "characters": len(text),
    }
{{handler}}

def main(argv):
    text = " ".join(argv[1:]) if len(argv) > 1 else sys.stdin.read()
    if not text.strip():
        print("example.py: error: give the text as arguments or on stdin", file=sys.stderr)
        return 2
    print(json.dumps(count(text)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
