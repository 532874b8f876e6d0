"""Entrypoint of the `{{name}}` Skills Protocol skill (skill.toml, [runtime]).

The runtime calls main(args) with the arguments as a dict and returns the value
main gives back as the run's output:

    execute_skill {"name": "{{name}}", "args": {"text": "the text to measure"}}
    -> {"words": 4, "lines": 1, "characters": 19}
"""


def main(args):
    """Count the words, lines and characters of args["text"]."""
    text = args.get("text") if isinstance(args, dict) else None
    if not isinstance(text, str):
        raise ValueError("'text' is required and must be a string")
    return {
        "words": len(text.split()),
        "lines": len(text.splitlines()),
        "characters": len(text),
    }
