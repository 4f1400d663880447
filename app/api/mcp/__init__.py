"""MCP over streamable HTTP at /mcp: the plugin's agent tools for any MCP client (docs/api.md, MCP)."""
