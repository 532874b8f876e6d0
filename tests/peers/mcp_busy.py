"""Three calls of a slow script at once over streamable HTTP, against a server that runs one
call at a time and queues none: one runs, the others get a busy error result.

    mcp_busy.py URL

Prints {"results": [{"is_error": bool, "text": str}, ...]}.
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
            calls = [
                session.call_tool("use_skill", {"skill": "alpha", "script": "scripts/slow.py"})
                for _ in range(3)
            ]
            results = await asyncio.gather(*calls)
    print(json.dumps({"results": [{"is_error": bool(r.is_error), "text": r.content[0].text} for r in results]}))


asyncio.run(main())
