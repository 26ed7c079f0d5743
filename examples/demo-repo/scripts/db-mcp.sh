#!/bin/sh
# The database server this project uses: here, the MCP reference "memory" server from npm.
exec npx -y @modelcontextprotocol/server-memory "$@"
