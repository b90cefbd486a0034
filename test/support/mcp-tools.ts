// The tools `kdebug mcp` offers, by name, as an assistant sees them (issue: Agents).
export const MCP_TOOLS = [
  'drift',
  'expect',
  'rules',
  'rules_search',
  'scenarios',
  'services',
  'snapshot_save',
  'svc',
  'trace',
];
