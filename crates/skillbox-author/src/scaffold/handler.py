

def handler(args):
    """The `{{tool}}` tool (tools.json): called with the arguments as a dict."""
    text = args.get("text")
    if not isinstance(text, str):
        raise ValueError("'text' is required and must be a string")
    return count(text)
