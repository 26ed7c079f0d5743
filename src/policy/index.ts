// The policy module's public surface: rules and their evaluation, host reversal, the
// secrets block, who a grant is for (scope and project), and masking. Nothing here imports vscode.

export type { Origin } from './names';
export { checkServerName, checkToolName, formatOrigin, NameError, quote } from './names';
export { hostAction, HostError, reverseHost } from './host';
export type { ActionKind, Decision, ParsedRules, Pattern, Rule, RuleText } from './rules';
export {
  ActionError,
  networkAction,
  parseAction,
  parsePattern,
  parseRules,
  RuleError,
  ruleText,
  secretAction,
  toolAction,
} from './rules';
export type { Asker, AskAnswer, AskQuestion, Resolved, Verdict } from './decide';
export { decide, decideFor, explain, mayCallTool, mayDiscover, resolve } from './decide';
export type { ProjectQualified, ProjectResolver, ServerIdentity } from './identity';
export { ANY_PROJECT, appliesTo, projectProblem, resolveProject, resolveProjects } from './identity';
export type { Bind, BindOptions, ParsedSecrets, SecretBinding, SecretEntry, SecretSource, ServerRef } from './secrets';
export { bindSecrets, headerValueProblem, parseSecrets, SecretError, secretApplies, serverSecretAction } from './secrets';
export { defaultMasker, MASK, Masker, MIN_SECRET_LENGTH } from './mask';
export type { Grants, LocalException, RawUserPolicy, UserPolicy } from './user-policy';
export { decideUnder, grantsFor, loadUserPolicies, loadUserPolicy, localExceptionFor } from './user-policy';
