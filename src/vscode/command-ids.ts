// Every command id the extension registers or runs, in one place (package.json's contributes.commands lists the
// same ids; test/unit/vscode/command-ids.test.ts keeps the two equal), and the context keys package.json's `menus`
// and walkthrough read (set by src/vscode/menus.ts; the same test checks every key a `when` names is one of them).
export const CMD = {
  openPanel: 'mcpGate.openPanel',
  approve: 'mcpGate.approve',
  reject: 'mcpGate.reject',
  reset: 'mcpGate.reset',
  updatePackage: 'mcpGate.updatePackage',
  showDefinition: 'mcpGate.showDefinition',
  setSecret: 'mcpGate.setSecret',
  clearSecret: 'mcpGate.clearSecret',
  showLog: 'mcpGate.showLog',
  doctor: 'mcpGate.doctor',
  routeVsCodeServers: 'mcpGate.routeVsCodeServers',
  reopenThroughGate: 'mcpGate.reopenThroughGate',
  installSandbox: 'mcpGate.installSandbox',
  reviewFile: 'mcpGate.reviewFile',
  serverActions: 'mcpGate.serverActions',
  tryTool: 'mcpGate.tryTool',
} as const;

export type CommandId = (typeof CMD)[keyof typeof CMD];

/** The context keys package.json's `when` clauses read (and walkthrough steps complete on). */
export const CONTEXT_KEYS = {
  /** Some server is declared in the open folders. */
  hasServers: 'mcpGate.hasServers',
  /** Some repository server can be approved now. */
  canApprove: 'mcpGate.canApprove',
  canReject: 'mcpGate.canReject',
  canReset: 'mcpGate.canReset',
  /** Some server has an approved package lock that can be updated. */
  canUpdatePackage: 'mcpGate.canUpdatePackage',
  /** VS Code itself would start some workspace server outside the gate (routing applies). */
  startsOutside: 'mcpGate.startsOutside',
  /** VS Code's own starts are routed through the gate at user scope, or the window is MCP Gate's workspace (the walkthrough's first step is done). */
  routed: 'mcpGate.routed',
  /** Checked, and VS Code starts nothing outside the gate. */
  nothingOutside: 'mcpGate.nothingOutside',
  /** A repository setting undoes the routing (reopening through MCP Gate applies). */
  routingOverridden: 'mcpGate.routingOverridden',
  /** Some server needs the sandbox and it cannot start on this machine (installing it applies). */
  sandboxMissing: 'mcpGate.sandboxMissing',
  /** Some repository server is approved (the walkthrough's approve step is done). */
  hasApproved: 'mcpGate.hasApproved',
  /** A tool was called through the gate in this window (Try a Tool…; the walkthrough's last step is done). */
  triedTool: 'mcpGate.triedTool',
} as const;

export type ContextKey = (typeof CONTEXT_KEYS)[keyof typeof CONTEXT_KEYS];
