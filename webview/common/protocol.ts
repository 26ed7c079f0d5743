// What the extension host and the trust panel's webview say to each other, and the view model the host sends.
// Pure types and constants: imported by the host (src/vscode/panel.ts), the webview bundle (webview/main.ts) and
// plain-Node unit tests. Every string in a view model is display text that already went through escapeText
// (hidden characters shown as escapes) and the masker; the webview only ever sets it as text.

export const VIEW_TYPE = 'mcpGate.trustPanel';

/** A server key: opaque, fixed-length, derived from (folder, source, name) by the host. Never parsed back. */
export const SERVER_KEY = /^s[0-9a-f]{32}$/;

/** `update`: resolve an approved npm server's package again and review the new lock (pinned npm servers only). */
export type PanelAction = 'approve' | 'reject' | 'reset' | 'update';
export const PANEL_ACTIONS: readonly PanelAction[] = ['approve', 'reject', 'reset', 'update'];

export type Section = 'waiting' | 'decided';

/** One line of a line diff. `ctx` is unchanged context, `note` a hunk header or a remark. */
export interface DiffLine {
  kind: 'add' | 'del' | 'ctx' | 'note';
  text: string;
}

export interface FieldDiffView {
  field: string;
  /** The whole value before and after, rendered (escaped, untruncated); "(absent)" when missing. */
  before: string;
  after: string;
  /** A line diff of the two renderings. */
  lines: DiffLine[];
}

export interface FileDiffView {
  path: string;
  change: 'added' | 'removed' | 'changed';
  /** e.g. "sha256 f25c4b3219eb → b0319e6eb2ff" */
  digests: string;
  /** Unified hunks, or empty with `note` when the text was not kept (binary or too large). */
  lines: DiffLine[];
  note?: string;
}

export interface ToolDiffView {
  name: string;
  change: 'added' | 'removed' | 'changed';
  lines: DiffLine[];
}

export interface ToolsDiffView {
  observedAt: string;
  approvedAt?: string;
  tools: ToolDiffView[];
  instructions?: DiffLine[];
}

export interface DefinitionDiffView {
  approvedAt: string;
  fields: FieldDiffView[];
  files: FileDiffView[];
}

export interface ServerView {
  key: string;
  section: Section;
  /** Folder display name (for a multi-root workspace). */
  folder: string;
  name: string;
  state: string;
  stateLabel: string;
  reason: string;
  /** A waiting server's risk headline ("Risk: this change starts programs (a.js:3 cp.exec)"): src/report/risk-text.ts. */
  risk?: string;
  gated: boolean;
  declared: { file: string; line: number; column: number; scope: string; source: string; importedBy: string[] };
  /** What it runs or reaches, one line, every argument quoted. */
  summary: string;
  transport?: 'stdio' | 'http';
  cwd?: string;
  /** The entry exactly as written, rendered as JSON-like text, every hidden character escaped. */
  definition: string;
  /** True when any string of the entry holds a character that is shown as an escape. */
  hidden: boolean;
  pinnedFiles: { path: string; size: number; sha256: string }[];
  /** The launch plan (local servers): what will be executed, and the folders whose trees are pinned and why. */
  plan?: { program: string; args: string; folder: string; variables?: string; roots: { path: string; why: string }[]; guarded?: string[] };
  /** The sandbox it gets (local servers), one line per aspect; the first says contained, opted out, or cannot start. */
  sandbox?: string[];
  envFile?: string;
  inputs?: string;
  digest?: string;
  decidedAt?: string;
  /** An approval imported from a team file: who signed it, the key's fingerprint, the file, when they signed. */
  approvedBy?: { by: string; key: string; file: string; at: string };
  /** Tool names pinned at the first start after approval. */
  pinnedTools?: string[];
  diff?: DefinitionDiffView;
  toolsDiff?: ToolsDiffView;
  actions: PanelAction[];
}

export interface PanelModel {
  generatedAt: string;
  folders: { name: string; project: string; error?: string }[];
  banners: { level: 'error' | 'warning' | 'info'; text: string; files?: string[] }[];
  servers: ServerView[];
  counts: { waiting: number; decided: number };
  /** Names the log can be filtered by (declared servers); the webview adds the ones seen in the log. */
  serverNames: string[];
  restricted: boolean;
}

/** An event of the exchange log, with a sequence number (ids grow in log order). */
export interface LogEntry {
  id: number;
  event: Record<string, unknown>;
}

/**
 * Log events as they travel to the webview: their JSON lines (masked) joined by "\n", line i having the id
 * firstId + i. One string crosses postMessage far faster than ten thousand objects, and the webview parses only
 * the lines it shows (all of them only when a filter needs them).
 */
export interface LogBatch {
  firstId: number;
  count: number;
  lines: string;
}

// ---- host → webview ---------------------------------------------------------------------------------------
export type HostMessage =
  | { type: 'model'; model: PanelModel }
  | { type: 'log'; reset: boolean; batch: LogBatch; truncated?: number }
  | { type: 'result'; action: PanelAction; key: string; ok: boolean; text: string }
  /** The host's copy of the UI state (kept in workspaceState, which VS Code writes at once). */
  | { type: 'ui'; state: UiState };

// ---- webview → host (validated in the host; anything else is dropped and logged) --------------------------
export type WebviewMessage =
  | { type: 'ready' }
  | { type: 'action'; action: PanelAction; key: string }
  | { type: 'open'; key: string }
  | { type: 'state'; state: UiState };

/** The webview's persisted UI state (getState/setState): small, no log data, no secrets. */
export interface UiState {
  tab: 'waiting' | 'decided' | 'log';
  filter: { server: string; outcome: string; kind: string; text: string };
  /** Server key → whether its card shows its details (absent: open while waiting, collapsed once decided). */
  expanded: Record<string, boolean>;
  selectedLog?: number;
  scroll: Record<string, number>;
  /** When the webview last changed it (Date.now()): the newer of the webview's and the host's copy wins. */
  savedAt?: number;
}

export const DEFAULT_UI_STATE: UiState = {
  tab: 'waiting',
  filter: { server: '', outcome: '', kind: '', text: '' },
  expanded: {},
  scroll: {},
};
