// A stand-in for a project's own MCP server (the demo never runs it).
console.error('notes server');
