"""The 18 agent tools and their MCP server."""
