"""The MCP door: the 18 tools served to MCP clients over stdio or streamable HTTP (`autovend serve`).

- `autovend.mcp.server`: the server (`build_server`), built on the official `mcp` SDK;
- `autovend.mcp.http`: one episode per HTTP session, and the HTTP gate (bearer token, JSON rules);
- `autovend.mcp.play`: the episodes a server hosts, unscored (`SessionPlay`) or scored into a run folder
  (`ScoredPlay`, through the outside-player driver `autovend.outside`);
- `autovend.mcp.jsonrpc`: JSON-RPC answers to messages that are none.

A door stands above the environment (`autovend.env`) and the runner; nothing below imports it. The modules
are imported on demand: the SDK is slow to import.
"""
