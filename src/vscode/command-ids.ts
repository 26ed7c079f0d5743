// Every command id the extension registers or runs, in one place (package.json's contributes.commands lists the
// same ids; test/unit/vscode/command-ids.test.ts keeps the two equal).
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
} as const;

export type CommandId = (typeof CMD)[keyof typeof CMD];
