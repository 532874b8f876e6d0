"""Drive `skillbox mcp` (stdio) or `skillbox serve`'s /mcp (streamable HTTP) with the official
Python MCP SDK, as any MCP client would, and report what held.

    mcp_client.py stdio EDIT_ROOT -- COMMAND ARG...
    mcp_client.py http EDIT_ROOT URL

EDIT_ROOT is the skill root the test made (it holds `alpha`, a skill with arguments, a
reference and a binary asset, and `hidden`, with disable-model-invocation); the hot-reload
check edits `alpha/SKILL.md` there. Prints one JSON object: {"checks": [...], "failures": [...],
"reload_ms": N}.
"""

import asyncio
import base64
import hashlib
import json
import os
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
import mcp.types as types

checks = []
failures = []


def check(name, condition, detail=""):
    checks.append(name)
    if not condition:
        failures.append(f"{name}: {detail}")


async def raw(session, method, params):
    return await session._dispatcher.send_raw_request(method, params, {})


async def expect_error(name, coroutine):
    try:
        await coroutine
    except MCPError as error:
        check(name, True)
        return error
    check(name, False, "no error")
    return None


async def scenario(session, edit_root, changes):
    init = await session.initialize()
    check("initialize: instructions list the skills", "alpha" in (init.instructions or ""), init.instructions)
    extensions = init.capabilities.model_dump(exclude_none=True, by_alias=True).get("extensions", {})
    check("initialize: skills extension declared", "io.modelcontextprotocol/skills" in extensions, extensions)

    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    check("tools/list: skills profile", {"load_skill", "use_skill", "read_skill_file", "count_words"} <= set(tools), list(tools))
    check("tools/list: read-only hint", tools["load_skill"].annotations.read_only_hint is True, tools["load_skill"].annotations)
    check("tools/list: tools.json schema", tools["count_words"].input_schema.get("type") == "object", tools["count_words"].input_schema)

    loaded = await session.call_tool("load_skill", {"name": "alpha", "arguments": "first second"})
    text = loaded.content[0].text
    check("tools/call load_skill", not loaded.is_error and "Topic: first" in text, text)
    counted = await session.call_tool("count_words", {"text": "one two three"})
    check("tools/call tools.json tool", not counted.is_error and "3" in counted.content[0].text, counted)
    check("tools/call structured content", isinstance(counted.structured_content, dict), counted.structured_content)
    script = await session.call_tool("use_skill", {"skill": "alpha", "script": "scripts/noisy.py"})
    check("tools/call script output stays in the result", "printed to stdout" in script.content[0].text, script)
    missing = await session.call_tool("load_skill", {"name": "no-such-skill"})
    check("tool error: isError with a message", missing.is_error and "no-such-skill" in missing.content[0].text, missing)
    bad = await session.call_tool("count_words", {"text": 42})
    check("tool error: arguments failing the schema", bad.is_error and "text" in bad.content[0].text, bad)
    hidden = await session.call_tool("load_skill", {"name": "hidden"})
    check("hidden skill is not loadable by the model", hidden.is_error, hidden)
    error = await expect_error("unknown tool is a protocol error", session.call_tool("no_such_tool", {}))
    check("unknown tool names the tools", error is not None and "load_skill" in str(error), error)

    prompts = {prompt.name: prompt for prompt in (await session.list_prompts()).prompts}
    check("prompts/list", "alpha" in prompts and "hidden" in prompts, list(prompts))
    arguments = [argument.name for argument in prompts["alpha"].arguments or []]
    check("prompts/list: declared arguments", arguments == ["topic", "depth"], arguments)
    check("user-invocable: false is no prompt", "quiet" not in prompts, list(prompts))
    got = await session.get_prompt("alpha", {"topic": "rust", "depth": "deep"})
    text = got.messages[0].content.text
    check("prompts/get substitutes arguments", "Topic: rust" in text and "Depth: deep" in text, text)
    await expect_error("prompts/get unknown argument", session.get_prompt("alpha", {"nope": "x"}))
    await expect_error("prompts/get unknown prompt", session.get_prompt("no-such-prompt", {}))

    resources = {str(resource.uri): resource for resource in (await session.list_resources()).resources}
    check("resources/list", "skill://alpha/SKILL.md" in resources and "skill://alpha/assets/logo.png" in resources, list(resources)[:20])
    check("resources/list: markdown type", resources["skill://alpha/SKILL.md"].mime_type == "text/markdown", resources["skill://alpha/SKILL.md"])
    check("resources/list: hidden skill absent", not any(uri.startswith("skill://hidden/") for uri in resources), list(resources))
    skill_md = (await session.read_resource("skill://alpha/SKILL.md")).contents[0]
    on_disk = open(os.path.join(edit_root, "alpha", "SKILL.md"), encoding="utf-8").read()
    check("resources/read text", skill_md.text == on_disk, skill_md)
    logo = (await session.read_resource("skill://alpha/assets/logo.png")).contents[0]
    logo_bytes = open(os.path.join(edit_root, "alpha", "assets", "logo.png"), "rb").read()
    check("resources/read binary", getattr(logo, "blob", None) is not None and base64.b64decode(logo.blob) == logo_bytes and logo.mime_type == "image/png", logo)
    # (big.bin, over 1 MiB, is read by the Rust test without this client: the SDK refuses a
    # server-sent event over 1 MiB, so it cannot read large resources over HTTP sessions.)
    for name in ["control.txt"]:
        content = (await session.read_resource(f"skill://alpha/assets/{name}")).contents[0]
        expected = open(os.path.join(edit_root, "alpha", "assets", name), "rb").read()
        check(f"resources/read {name} as base64", getattr(content, "blob", None) is not None and base64.b64decode(content.blob) == expected, str(content)[:200])
    templates = (await session.list_resource_templates()).resource_templates
    check("resources/templates/list", any(t.uri_template == "skill://{skill}/{+path}" for t in templates), templates)
    for uri in ["skill://alpha/../hidden/SKILL.md", "skill://alpha/%2e%2e/x", "file:///etc/passwd", "skill://hidden/SKILL.md", "skill://alpha/missing.md"]:
        await expect_error(f"resources/read refuses {uri}", session.read_resource(uri))

    listed = await raw(session, "skills/list", {})
    entries = {entry["uri"]: entry for entry in listed["skills"]}
    check("skills/list", "skill://alpha/SKILL.md" in entries and "skill://hidden/SKILL.md" not in entries, list(entries))
    got = await raw(session, "skills/get", {"uri": "skill://alpha/SKILL.md"})
    entry = got["skill"]
    check("skills/get: verbatim frontmatter", entry["frontmatter"].get("metadata") == {"owner": "tests", "revision": "1.10"} and entry["frontmatter"]["name"] == "alpha", entry["frontmatter"])
    digests_ok = True
    files = set()
    for resource in entry["resources"]:
        relative = resource["uri"][len("skill://alpha/"):]
        files.add(relative)
        data = open(os.path.join(edit_root, "alpha", relative), "rb").read()
        digests_ok &= resource["digest"] == "sha256:" + hashlib.sha256(data).hexdigest() and resource["size"] == len(data)
    check("skills/get: digests and sizes match the files", digests_ok, entry["resources"])
    check("skills/get: every file, SKILL.md included", {"SKILL.md", "references/guide.md", "assets/logo.png", "scripts/noisy.py"} <= files, files)
    await expect_error("skills/get unknown skill", raw(session, "skills/get", {"uri": "skill://nope/SKILL.md"}))
    children = await raw(session, "resources/directory/read", {"uri": "skill://alpha"})
    names = {child["name"]: child.get("mimeType") for child in children["resources"]}
    check("resources/directory/read", names.get("SKILL.md") == "text/markdown" and names.get("assets") == "inode/directory", names)

    completion = await session.complete(types.ResourceTemplateReference(type="ref/resource", uri="skill://{skill}/{+path}"), {"name": "skill", "value": "al"})
    check("completion: skill names", completion.completion.values == ["alpha"], completion)
    completion = await session.complete(
        types.ResourceTemplateReference(type="ref/resource", uri="skill://{skill}/{+path}"),
        {"name": "path", "value": "ref"},
        context_arguments={"skill": "alpha"},
    )
    check("completion: file paths", completion.completion.values == ["references/guide.md"], completion)

    # Hot reload: edit alpha's description and wait for the change notification.
    path = os.path.join(edit_root, "alpha", "SKILL.md")
    edited = on_disk.replace("Explains a topic.", "Explains a topic, edited.")
    started = time.monotonic()
    with open(path + ".tmp", "w", encoding="utf-8") as file:
        file.write(edited)
    os.replace(path + ".tmp", path)
    try:
        await asyncio.wait_for(changes.wait(), 5)
        notified = True
    except asyncio.TimeoutError:
        notified = False
    reload_ms = (time.monotonic() - started) * 1000
    check("hot reload: list_changed notification", notified, "no notification in 5 s")
    again = (await session.read_resource("skill://alpha/SKILL.md")).contents[0].text
    check("hot reload: new content served", "edited" in again, again)
    prompts = {prompt.name: prompt for prompt in (await session.list_prompts()).prompts}
    check("hot reload: prompt description", "edited" in (prompts["alpha"].description or ""), prompts["alpha"])
    return reload_ms


async def main():
    mode, edit_root = sys.argv[1], sys.argv[2]
    changes = asyncio.Event()

    async def on_message(message):
        if isinstance(message, types.ServerNotification) or hasattr(message, "root"):
            root = getattr(message, "root", message)
            if isinstance(root, types.ToolListChangedNotification):
                changes.set()
        elif isinstance(message, types.ToolListChangedNotification):
            changes.set()

    if mode == "stdio":
        command = sys.argv[4:]
        params = StdioServerParameters(command=command[0], args=command[1:])
        transport = stdio_client(params)
    else:
        transport = streamable_http_client(sys.argv[3])
    async with transport as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write, message_handler=on_message) as session:
            reload_ms = await scenario(session, edit_root, changes)
    print(json.dumps({"checks": checks, "failures": failures, "reload_ms": reload_ms}))


asyncio.run(main())
