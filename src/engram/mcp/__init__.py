"""The MCP server (SPEC 9): `engram mcp` on stdio, and streamable HTTP at /mcp in `engram serve`."""
