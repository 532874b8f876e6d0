"""Check the output schemas `skillbox mcp` lists with the official Python MCP SDK: which tools
have one, and that what their calls answer matches it. The SDK itself validates a successful
call's structured content against the tool's outputSchema (and raises when it does not match);
failures (isError), which it does not validate, are checked here with jsonschema.

    mcp_output_schemas.py SKILLBOX EXAMPLES_ROOT EDIT_ROOT DATA_DIR

EDIT_ROOT is the root `write_mcp_root` makes (`alpha`, with scripts, a reference and a binary
asset). Prints one JSON object: {"checks": [...], "failures": [...]}.
"""

import asyncio
import json
import sys

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
import mcp.types as types

checks = []
failures = []


def check(name, condition, detail=""):
    checks.append(name)
    if not condition:
        failures.append(f"{name}: {detail}")


def conforms(instance, schema):
    """None when `instance` matches `schema`, else the error."""
    try:
        jsonschema.validate(instance, schema)
    except jsonschema.ValidationError as error:
        return str(error)
    return None


async def call(session, name, arguments):
    """A call whose success the SDK validates against the tool's outputSchema."""
    try:
        return await session.call_tool(name, arguments)
    except RuntimeError as error:
        check(f"{name}: the SDK accepts the structured content", False, str(error))
        return None


async def skills_profile(session):
    await session.initialize()
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    use_skill = tools["use_skill"].output_schema
    check("use_skill lists an output schema", isinstance(use_skill, dict), tools["use_skill"])
    if not isinstance(use_skill, dict):
        return
    check("use_skill's output schema is an object's", use_skill.get("type") == "object", use_skill)
    check(
        "use_skill's output schema is seed 002's result",
        {"success", "stdout", "stderr", "exitCode"} <= set(use_skill.get("required", []))
        and {"error", "errorType"} <= set(use_skill.get("properties", {})),
        use_skill,
    )
    check("read_skill_file lists an output schema", isinstance(tools["read_skill_file"].output_schema, dict), tools["read_skill_file"])
    check("load_skill (text or a list) lists none", tools["load_skill"].output_schema is None, tools["load_skill"].output_schema)
    check("a tools.json tool lists none", tools["count_words"].output_schema is None, tools["count_words"].output_schema)

    ran = await call(session, "use_skill", {"skill": "alpha", "script": "scripts/noisy.py"})
    if ran is not None:
        check("use_skill succeeds", not ran.is_error, ran)
        check("use_skill answers structured content", isinstance(ran.structured_content, dict), ran)
        check("use_skill's answer is seed 002's", ran.structured_content.get("success") is True and "printed to stdout" in ran.structured_content.get("stdout", ""), ran.structured_content)
        # The SDK's own check rejects an answer the schema does not allow.
        tampered = types.CallToolResult(content=ran.content, structured_content={"success": "yes"}, is_error=False)
        try:
            await session.validate_tool_result("use_skill", tampered)
            check("the SDK rejects an answer off the schema", False, "accepted")
        except RuntimeError:
            check("the SDK rejects an answer off the schema", True)

    # A failure is not validated by the SDK; it is the same result, and matches too.
    missing = await session.call_tool("use_skill", {"skill": "alpha", "script": "scripts/nope.py"})
    check("a missing script fails", missing.is_error, missing)
    check("the failure says its kind", (missing.structured_content or {}).get("errorType") == "ScriptNotFound", missing.structured_content)
    problem = conforms(missing.structured_content, use_skill)
    check("the failure matches the output schema", problem is None, problem)

    for path in ["references/guide.md", "assets/logo.png"]:
        read = await call(session, "read_skill_file", {"skill": "alpha", "path": path})
        if read is not None:
            check(f"read_skill_file {path}", not read.is_error and read.structured_content["path"] == path, read)


async def protocol_profile(session):
    await session.initialize()
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    with_schema = {name for name, tool in tools.items() if tool.output_schema is not None}
    check(
        "the protocol tools with a fixed result list an output schema",
        with_schema == {"list_skills", "describe_skill", "read_skill_file", "create_blob", "read_blob", "load_skills_protocol_guide"},
        sorted(with_schema),
    )
    for name in sorted(with_schema):
        check(f"{name}'s output schema is an object's", tools[name].output_schema.get("type") == "object", tools[name].output_schema)

    listed = await call(session, "list_skills", {"detail": "summary", "limit": 2})
    if listed is not None:
        check("list_skills answers a page", not listed.is_error and len(listed.structured_content["skills"]) == 2, listed)
        check("list_skills gives the next cursor", isinstance(listed.structured_content["next_cursor"], str), listed.structured_content)
    last = await call(session, "list_skills", {"limit": 1000})
    if last is not None:
        check("the last page's cursor is null", last.structured_content["next_cursor"] is None, last.structured_content)
    for detail in ["manifest", "summary", "full"]:
        described = await call(session, "describe_skill", {"name": "alpha", "detail": detail})
        if described is not None:
            check(f"describe_skill {detail}", not described.is_error and described.structured_content["skill"]["name"] == "alpha", described)
    read = await call(session, "read_skill_file", {"name": "alpha", "path": "SKILL.md"})
    if read is not None:
        check("read_skill_file (protocol)", not read.is_error and "Alpha" in read.structured_content["content"], read)
    guide = await call(session, "load_skills_protocol_guide", {})
    if guide is not None:
        check("the guide", not guide.is_error and len(guide.structured_content["content"]) > 100, guide)
    created = await call(session, "create_blob", {"content": "AAEC/w==", "kind": "application/octet-stream", "encoding": "base64"})
    if created is not None:
        blob_id = created.structured_content["blob_id"]
        check("create_blob", not created.is_error and blob_id.startswith("blob:"), created)
        sample = await call(session, "read_blob", {"blob_id": blob_id, "mode": "full"})
        if sample is not None:
            answer = sample.structured_content
            check("read_blob of binary bytes", (answer["encoding"], answer["preview"]) == ("base64", "AAEC/w=="), answer)
    text = await call(session, "create_blob", {"content": "hello blob", "kind": "text/plain"})
    if text is not None:
        head = await call(session, "read_blob", {"blob_id": text.structured_content["blob_id"], "max_bytes": 5})
        if head is not None:
            answer = head.structured_content
            check("read_blob of a text's head", (answer["encoding"], answer["preview"], answer["truncated"]) == ("utf-8", "hello", True), answer)


async def session_of(command, scenario):
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await scenario(session)


async def main():
    skillbox, examples, edit_root, data_dir = sys.argv[1:5]
    await session_of([skillbox, "mcp", "--no-watch", examples, edit_root], skills_profile)
    await session_of(
        [skillbox, "mcp", "--no-watch", "--profile", "protocol", "--data-dir", data_dir, edit_root],
        protocol_profile,
    )
    print(json.dumps({"checks": checks, "failures": failures}))


asyncio.run(main())
