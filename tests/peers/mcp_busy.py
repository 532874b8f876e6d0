"""Three slow calls at once over streamable HTTP, against a server that runs one call at a time
and queues none: one runs, the others are refused as busy.

    mcp_busy.py URL tools      three use_skill calls of a script that sleeps
    mcp_busy.py URL prompts    three prompts/get of a skill whose body runs a command that sleeps

Prints {"results": [{"is_error": bool, "text": str}, ...]}; a refused prompts/get (a protocol
error) is {"is_error": true, "text": its message}.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main():
    async with streamable_http_client(sys.argv[1]) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            if sys.argv[2] == "tools":
                calls = [
                    session.call_tool("use_skill", {"skill": "alpha", "script": "scripts/slow.py"})
                    for _ in range(3)
                ]
                answers = await asyncio.gather(*calls)
                results = [{"is_error": bool(r.is_error), "text": r.content[0].text} for r in answers]
            else:
                answers = await asyncio.gather(
                    *[session.get_prompt("slow-prompt", {}) for _ in range(3)], return_exceptions=True
                )
                results = [
                    {"is_error": True, "text": str(r)}
                    if isinstance(r, Exception)
                    else {"is_error": False, "text": r.messages[0].content.text}
                    for r in answers
                ]
    print(json.dumps({"results": results}))


asyncio.run(main())
