// The trust panel's webview: Waiting (pending and changed servers), Decided (approved, rejected, blocked, trusted)
// and Log (the exchange log, virtualised, filtered, searchable). It renders what the extension host sends and
// asks the host to act; it decides nothing itself. Every string from the host is display text (escaped and masked
// there) and is only ever set as textContent or an attribute value. UI state (tab, filters, what is expanded,
// scroll) is kept with setState, so it survives a reload and a window restart.
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-icon/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-tab-header/index.js';
import '@vscode-elements/elements/dist/vscode-tab-panel/index.js';
import '@vscode-elements/elements/dist/vscode-tabs/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import type { VscodeCollapsible } from '@vscode-elements/elements/dist/vscode-collapsible/vscode-collapsible.js';
import type { VscodeSingleSelect } from '@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js';
import type { VscodeTabs } from '@vscode-elements/elements/dist/vscode-tabs/vscode-tabs.js';
import type { VscodeTextfield } from '@vscode-elements/elements/dist/vscode-textfield/vscode-textfield.js';
import { codicon, h, icon } from './browser/dom';
import { detailsText, filterRows, indexById, KIND_GROUPS, OUTCOME_CHOICES, parseEvent, rowSummary, serversIn, toRow, unbatch, type LogRow } from './common/log-model';
import {
  type DiffLine, type HostMessage, type PanelAction, type PanelModel, type ServerView, type UiState,
  type WebviewMessage,
} from './common/protocol';
import { sanitizeUiState, TABS } from './common/ui-state';
import { VirtualList } from './browser/virtual-list';
import { exactTime, relativeTime } from '../src/report/relative-time';
import { STATE_CODICON } from '../src/trust/gate-state';

interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): unknown;
  setState(state: UiState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

performance.mark('mcp-gate:start');
const vscode = acquireVsCodeApi();
const ROW_HEIGHT = 22;
const MAX_ENTRIES = 50_000;

// ---- state --------------------------------------------------------------------------------------------------
// Kept two ways: the webview's own state (getState/setState, restored by VS Code with the panel) and a copy in the
// host (workspaceState, written at once), because VS Code for the web may restore a webview state older than the
// last setState after a quick reload. The newer copy wins.
let ui = sanitizeUiState(vscode.getState());
let saveTimer: ReturnType<typeof setTimeout> | undefined;
let hostTimer: ReturnType<typeof setTimeout> | undefined;
function save(): void {
  ui.savedAt = Date.now();
  saveTimer ??= setTimeout(() => {
    saveTimer = undefined;
    vscode.setState(ui);
  }, 100);
  hostTimer ??= setTimeout(() => {
    hostTimer = undefined;
    post({ type: 'state', state: ui });
  }, 300);
}

let model: PanelModel | undefined;
// The log, oldest first: its JSON lines and their ids; events and rows are made from them on demand (only those
// in view, until a filter needs them all).
let lines: string[] = [];
let ids: number[] = [];
let events: (Record<string, unknown> | undefined)[] = [];
let rowCache: (LogRow | undefined)[] = [];
let shownLength = 0;
let truncated = 0;
const busy = new Set<string>();

// ---- skeleton -----------------------------------------------------------------------------------------------
const app = document.getElementById('app')!;
const updated = h('span', { class: 'updated' });
const folders = h('span', { class: 'folders' });
const banners = h('div', { class: 'banners', attrs: { role: 'region', 'aria-label': 'Warnings' } });
const status = h('div', { class: 'status', attrs: { role: 'status', 'aria-live': 'polite' } });

const badge = () => h('vscode-badge', { attrs: { variant: 'counter' }, text: '0' });
const badges = { waiting: badge(), decided: badge(), log: badge() };
const lists = { waiting: h('div', { class: 'servers', attrs: { id: 'waiting' } }), decided: h('div', { class: 'servers', attrs: { id: 'decided' } }) };

const search = h('vscode-textfield', { class: 'search', attrs: { placeholder: 'Search the log', 'aria-label': 'Search the log' } }, icon('search')) as VscodeTextfield;
search.firstElementChild?.setAttribute('slot', 'content-before');
const select = (label: string) => h('vscode-single-select', { attrs: { 'aria-label': label } }) as VscodeSingleSelect;
const serverSelect = select('Filter by server');
const outcomeSelect = select('Filter by outcome');
const kindSelect = select('Filter by kind');
const logCount = h('span', { class: 'log-count' });
const clearFilters = h('vscode-button', { attrs: { secondary: true, icon: 'clear-all' }, text: 'Clear filters' });
const logHead = h('div', { class: 'log-row log-head', attrs: { role: 'row' } },
  ...['Time', 'Event', 'Server', 'About', 'Outcome', 'Status', 'Detail'].map((t) => h('span', { class: 'cell', text: t, attrs: { role: 'columnheader' } })));
const viewport = h('div', { class: 'log-viewport', attrs: { tabindex: '0', role: 'grid', 'aria-label': 'Exchange log, newest first' } });
const detailsTitle = h('span', { class: 'details-title' });
const detailsBody = h('pre', { class: 'details-body' });
const details = h('div', { class: 'log-details', attrs: { hidden: true, role: 'region', 'aria-label': 'Event details' } },
  h('div', { class: 'details-bar' }, codicon('info'), detailsTitle,
    h('vscode-button', { attrs: { secondary: true, icon: 'close' }, text: 'Close', on: { click: () => closeDetails() } })),
  detailsBody);
const logEmpty = h('div', { class: 'empty', attrs: { hidden: true } });

const tabs = h('vscode-tabs', { attrs: { 'selected-index': String(TABS.indexOf(ui.tab)) } },
  h('vscode-tab-header', { attrs: { slot: 'header', 'data-tab': 'waiting' } }, icon('bell'), ' Waiting ', badges.waiting),
  h('vscode-tab-panel', {}, lists.waiting),
  h('vscode-tab-header', { attrs: { slot: 'header', 'data-tab': 'decided' } }, icon('checklist'), ' Decided ', badges.decided),
  h('vscode-tab-panel', {}, lists.decided),
  h('vscode-tab-header', { attrs: { slot: 'header', 'data-tab': 'log' } }, icon('output'), ' Log ', badges.log),
  h('vscode-tab-panel', {},
    h('div', { class: 'log', attrs: { id: 'log' } },
      h('div', { class: 'log-toolbar' }, search, serverSelect, outcomeSelect, kindSelect, clearFilters, logCount),
      logHead, viewport, logEmpty, details)),
) as VscodeTabs;

app.append(
  h('header', { class: 'bar' }, icon('shield'), h('h1', { text: 'MCP Gate' }), h('span', { class: 'subtitle', text: 'trust panel' }), folders, updated),
  banners,
  tabs,
  status,
);
app.removeAttribute('aria-busy');

// ---- tabs ---------------------------------------------------------------------------------------------------
tabs.addEventListener('vsc-tabs-select', (e) => {
  ui.scroll[ui.tab] = ui.tab === 'log' ? viewport.scrollTop : document.scrollingElement?.scrollTop ?? 0;
  ui.tab = TABS[e.detail.selectedIndex] ?? 'waiting';
  save();
  if (ui.tab === 'log') requestAnimationFrame(() => { sizeLog(); list.renderNow(); });
});

// ---- servers ------------------------------------------------------------------------------------------------
const STATE_ICON: Record<string, string> = STATE_CODICON;
const ACTION_LABEL: Record<PanelAction, string> = { approve: 'Approve', reject: 'Reject', reset: 'Reset', update: 'Update' };
const ACTION_ICON: Record<PanelAction, string> = { approve: 'check', reject: 'close', reset: 'discard', update: 'cloud-download' };

function post(m: WebviewMessage): void {
  vscode.postMessage(m);
}

function setStatus(text: string, level: 'info' | 'error' = 'info'): void {
  status.textContent = text;
  status.className = `status ${level}`;
}

function diffBlock(lines: DiffLine[], label: string): HTMLElement {
  const block = h('div', { class: 'diff', attrs: { role: 'group', 'aria-label': label } });
  for (const l of lines) {
    const mark = l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : l.kind === 'note' ? '' : ' ';
    block.append(h('div', { class: `dl ${l.kind}` }, h('span', { class: 'mark', text: mark, attrs: { 'aria-hidden': 'true' } }),
      h('span', { class: 'txt', text: l.text, attrs: l.kind === 'add' ? { 'aria-label': `added: ${l.text}` } : l.kind === 'del' ? { 'aria-label': `removed: ${l.text}` } : {} })));
  }
  return block;
}

function collapsible(key: string, part: 'def' | 'diff', heading: string, description: string, defaultOpen: boolean, ...content: HTMLElement[]): VscodeCollapsible {
  const c = h('vscode-collapsible', { class: `part-${part}`, attrs: { heading, description } }, ...content) as VscodeCollapsible;
  // The definition's open/closed state is kept per server; the diff of a changed server always starts open.
  c.open = part === 'def' ? ui.expanded[key] ?? defaultOpen : defaultOpen;
  if (part === 'def') {
    c.addEventListener('vsc-collapsible-toggle', (e) => {
      ui.expanded[key] = e.detail.open;
      save();
    });
  }
  return c;
}

/** A time as read ("3 minutes ago"), exact on hover; kept current by the minute tick below. */
function when(iso: string, prefix = ''): HTMLElement {
  return h('time', { class: 'when', text: `${prefix}${relativeTime(iso, Date.now(), navigator.language)}`, attrs: { datetime: iso, title: exactTime(iso), 'data-prefix': prefix } });
}
setInterval(() => {
  for (const t of document.querySelectorAll<HTMLElement>('time.when')) t.textContent = `${t.dataset.prefix ?? ''}${relativeTime(t.getAttribute('datetime') ?? '', Date.now(), navigator.language)}`;
}, 30_000);

/** A digest shortened for reading, the full one on hover and in what a copy takes. */
function digest(full: string): HTMLElement {
  const short = full.length > 19 ? `${full.slice(0, 19)}…` : full;
  const code = h('code', { class: 'hash', text: short, attrs: { title: full } });
  code.addEventListener('copy', (e) => {
    e.clipboardData?.setData('text/plain', full);
    e.preventDefault();
  });
  const copy = h('vscode-button', { class: 'copy', attrs: { secondary: true, icon: 'copy', title: `Copy ${full}`, 'aria-label': 'Copy the full digest' } });
  copy.addEventListener('click', () => void navigator.clipboard?.writeText(full).then(() => setStatus('Digest copied.'), () => setStatus('The digest could not be copied.', 'error')));
  return h('span', { class: 'digest-value' }, code, copy);
}

function meta(label: string, ...value: (string | HTMLElement)[]): HTMLElement[] {
  return [h('dt', { text: label }), h('dd', {}, ...value)];
}

function serverCard(s: ServerView): HTMLElement {
  const card = h('section', { class: `card state-${s.state}`, attrs: { 'data-key': s.key, 'aria-label': `${s.name}, ${s.stateLabel}` } });
  const actions = h('div', { class: 'actions' });
  for (const a of s.actions) {
    const b = h('vscode-button', {
      class: `act act-${a}`,
      attrs: { icon: ACTION_ICON[a], ...(a === 'approve' ? {} : { secondary: true }), ...(busy.has(s.key) ? { disabled: true } : {}), 'data-action': a },
      text: a === 'approve' && (s.diff || s.toolsDiff) ? 'Review changes and approve…' : a === 'approve' ? 'Approve…' : a === 'reject' ? 'Reject…' : a === 'update' ? 'Update package…' : ACTION_LABEL[a],
    });
    b.addEventListener('click', () => onAction(s, a, card));
    actions.append(b);
  }
  const open = h('vscode-button', { class: 'act act-open', attrs: { secondary: true, icon: 'go-to-file', title: 'Open the file that declares it' }, text: 'Open file' });
  open.addEventListener('click', () => post({ type: 'open', key: s.key }));
  actions.append(open);

  card.append(h('div', { class: 'head' },
    icon(STATE_ICON[s.state] ?? 'circle', s.stateLabel),
    h('h3', { class: 'name', text: s.name }),
    h('span', { class: `state state-${s.state}`, text: s.stateLabel }),
    h('span', { class: 'source', text: s.declared.source }),
    actions));
  card.append(h('p', { class: 'reason', text: s.reason }));

  const dl = h('dl', { class: 'meta' });
  // Repository files by their workspace-relative path; the full path on hover.
  const declared = s.declared.scope === 'repository' ? s.declared.source : s.declared.file;
  dl.append(...meta('Declared in', h('code', { text: `${declared}:${s.declared.line}:${s.declared.column}`, attrs: { title: s.declared.file } })));
  // "repository scope, gated" is what every waiting server is; the line is shown only where it says more.
  if (!s.gated || s.declared.scope !== 'repository') dl.append(...meta('Scope', `${s.declared.scope} scope, ${s.gated ? 'gated: runs only once approved' : 'trusted: written by a person on this machine'}`));
  if (s.declared.importedBy.length) dl.append(...meta('Imported by', ...s.declared.importedBy.flatMap((f, i) => [i ? ', ' : '', h('code', { text: f })])));
  if (model && model.folders.length > 1) dl.append(...meta('Folder', s.folder));
  dl.append(...meta(s.transport === 'http' ? 'Connects to' : 'Runs', h('code', { class: 'summary', text: s.summary })));
  if (s.cwd) dl.append(...meta('In folder', h('code', { text: s.cwd })));
  if (s.decidedAt) dl.append(...meta('Decided', when(s.decidedAt)));
  card.append(dl);

  if (s.hidden) {
    card.append(h('div', { class: 'warn hidden-chars', attrs: { role: 'note' } }, codicon('warning'),
      ' This definition contains invisible, control or reordering characters. Each is shown as an escape (such as \\u202E); nothing is hidden or cut.'));
  }

  const changed = !!(s.diff || s.toolsDiff);
  if (changed) {
    const parts: HTMLElement[] = [];
    if (s.diff) {
      if (s.diff.fields.length) parts.push(h('h4', { text: 'Changed fields' }));
      for (const f of s.diff.fields) parts.push(h('div', { class: 'diff-item field' }, h('div', { class: 'diff-title' }, codicon('symbol-field'), ' field ', h('code', { text: f.field })), diffBlock(f.lines, `field ${f.field}`)));
      if (s.diff.files.length) parts.push(h('h4', { text: 'Files it runs' }));
      for (const f of s.diff.files) {
        parts.push(h('div', { class: 'diff-item file' },
          h('div', { class: 'diff-title' }, codicon('file'), ' ', h('code', { text: f.path }), ` ${f.change}`, f.digests ? h('span', { class: 'digests', text: ` (${f.digests})` }) : null),
          f.note ? h('p', { class: 'note', text: f.note }) : null,
          f.lines.length ? diffBlock(f.lines, `file ${f.path}`) : null));
      }
    }
    if (s.toolsDiff) {
      parts.push(h('h4', { text: `Tools it offers (seen ${s.toolsDiff.observedAt}${s.toolsDiff.approvedAt ? `; pinned ${s.toolsDiff.approvedAt}` : ''})` }));
      for (const t of s.toolsDiff.tools) {
        parts.push(h('div', { class: 'diff-item tool' }, h('div', { class: 'diff-title' }, codicon('tools'), ' tool ', h('code', { text: t.name }), ` ${t.change}`), diffBlock(t.lines, `tool ${t.name}`)));
      }
      if (s.toolsDiff.instructions) parts.push(h('div', { class: 'diff-item instructions' }, h('div', { class: 'diff-title' }, codicon('book'), ' server instructions'), diffBlock(s.toolsDiff.instructions, 'instructions')));
    }
    const at = s.diff?.approvedAt ?? s.decidedAt;
    const since = at ? `approved ${relativeTime(at, Date.now(), navigator.language)}` : '';
    const c = collapsible(s.key, 'diff', 'Changes since approval', since, true, ...parts);
    c.classList.add('changes');
    card.append(c);
  }

  const def: HTMLElement[] = [h('pre', { class: 'definition', text: s.definition })];
  if (s.plan) {
    def.push(h('h4', { text: 'Launch plan: what will be executed' }));
    const rows: [string, string][] = [['Program', s.plan.program], ['Arguments', s.plan.args], ['Folder', s.plan.folder]];
    if (s.plan.variables) rows.push(['Variables', s.plan.variables]);
    const pt = h('table', { class: 'files plan' });
    for (const [k, v] of rows) pt.append(h('tr', {}, h('th', { text: k }), h('td', {}, h('code', { text: v }))));
    def.push(pt);
    if (s.plan.roots.length) {
      def.push(h('h4', { text: 'Execution closure: folders pinned whole' }));
      const rt = h('table', { class: 'files roots' });
      for (const r of s.plan.roots) rt.append(h('tr', {}, h('td', {}, h('code', { text: r.path })), h('td', { text: r.why })));
      def.push(rt);
    }
  }
  if (s.sandbox?.length) {
    def.push(h('h4', { text: 'Sandbox' }));
    def.push(h('ul', { class: `sandbox${s.sandbox[0].startsWith('contained') ? '' : ' uncontained'}` }, ...s.sandbox.map((l) => h('li', { text: l }))));
  }
  if (s.pinnedFiles.length) {
    def.push(h('h4', { text: 'Files it can execute or load (content pinned)' }));
    const t = h('table', { class: 'files' }, h('tr', {}, h('th', { text: 'File' }), h('th', { text: 'Bytes' }), h('th', { text: 'SHA-256' })));
    for (const f of s.pinnedFiles) t.append(h('tr', {}, h('td', {}, h('code', { text: f.path })), h('td', { text: String(f.size) }), h('td', {}, digest(f.sha256))));
    def.push(t);
  }
  if (s.envFile) def.push(h('p', {}, 'envFile ', h('code', { text: s.envFile })));
  if (s.inputs) def.push(h('h4', { text: 'Inputs it asks for' }), h('pre', { class: 'definition', text: s.inputs }));
  if (s.pinnedTools?.length) def.push(h('p', { class: 'tools' }, `Tools pinned at the first start: `, ...s.pinnedTools.flatMap((t, i) => [i ? ', ' : '', h('code', { text: t })])));
  if (s.digest) def.push(h('p', { class: 'digest' }, 'digest ', digest(s.digest)));
  card.append(collapsible(s.key, 'def', 'Definition as written', s.declared.source, s.section === 'waiting', ...def));
  return card;
}

function onAction(s: ServerView, a: PanelAction, card: HTMLElement): void {
  if (busy.has(s.key)) return;
  // One press: VS Code opens the definition (for a changed server, the change in its diff editor) and asks.
  busy.add(s.key);
  for (const b of card.querySelectorAll<HTMLElement>('.act')) b.setAttribute('disabled', '');
  setStatus(a === 'approve' && (s.diff || s.toolsDiff)
    ? `VS Code shows the changes to ${s.name} side by side and asks whether to approve them.`
    : a === 'update' ? `VS Code asks the registry for ${s.name}'s package again and shows what changed before asking.`
    : `${ACTION_LABEL[a]} ${s.name}…`);
  post({ type: 'action', action: a, key: s.key });
}

const cards = new Map<string, { sig: string; el: HTMLElement }>();

function renderServers(): void {
  if (!model) return;
  const seen = new Set<string>();
  for (const section of ['waiting', 'decided'] as const) {
    const container = lists[section];
    const order = new Map(model.folders.map((f, i) => [f.name, i]));
    const items = model.servers.filter((s) => s.section === section).sort((a, b) => (order.get(a.folder) ?? 0) - (order.get(b.folder) ?? 0));
    const nodes: HTMLElement[] = [];
    let lastFolder: string | undefined;
    for (const s of items) {
      const sig = JSON.stringify([s, busy.has(s.key), model.folders.length > 1]);
      let c = cards.get(s.key);
      if (!c || c.sig !== sig) {
        c = { sig, el: serverCard(s) };
        cards.set(s.key, c);
      }
      seen.add(s.key);
      // In a multi-root workspace each folder is its own group, under its name.
      if (model.folders.length > 1 && s.folder !== lastFolder) nodes.push(h('h2', { class: 'folder-group', text: s.folder }));
      lastFolder = s.folder;
      nodes.push(c.el);
    }
    if (!items.length) {
      nodes.push(section === 'waiting'
        ? h('div', { class: 'empty' }, codicon('pass'), ' Nothing waits for review: every server this workspace declares has been decided.')
        : h('div', { class: 'empty' }, codicon('info'), ' No server has been decided yet.'));
    }
    container.replaceChildren(...nodes);
  }
  for (const k of [...cards.keys()]) if (!seen.has(k)) cards.delete(k);
  badges.waiting.textContent = String(model.counts.waiting);
  badges.decided.textContent = String(model.counts.decided);
}

function renderModel(): void {
  if (!model) return;
  folders.textContent = model.folders.map((f) => f.name).join(', ');
  const t = /T(\d\d:\d\d:\d\d)/.exec(model.generatedAt);
  updated.textContent = t ? `updated ${t[1]} UTC` : '';
  banners.replaceChildren(...model.banners.map((b) => h('div', { class: `banner ${b.level}`, attrs: { role: b.level === 'error' ? 'alert' : 'note' } },
    codicon(b.level === 'error' ? 'error' : b.level === 'warning' ? 'warning' : 'info'), ' ', h('span', { text: b.text }),
    b.files?.length ? h('div', { class: 'files' }, 'files: ', ...b.files.flatMap((f, i) => [i ? ', ' : '', h('code', { text: f })])) : null)));
  renderServers();
  refreshServerOptions();
}

// ---- log ----------------------------------------------------------------------------------------------------
const GROUP_ICON: Record<string, string> = { 'mcp.request': 'arrow-swap', tool: 'tools', gate: 'shield', server: 'server-process', secret: 'key', other: 'circle-small' };
const OUTCOME_CLASS: Record<string, string> = {
  answered: 'ok', ok: 'ok', refused_by_policy: 'bad', refused_by_address: 'bad', error: 'bad', redirected: 'warn', no_answer: 'warn',
};

const list = new VirtualList<LogRow>({
  viewport,
  rowHeight: ROW_HEIGHT,
  createRow() {
    const row = h('div', { class: 'log-row' });
    for (const c of ['time', 'kind', 'server', 'about', 'outcome', 'status', 'detail']) {
      const cell = h('span', { class: `cell c-${c}`, attrs: { role: 'gridcell' } });
      if (c === 'kind') cell.append(h('span', { class: 'codicon', attrs: { 'aria-hidden': 'true' } }), h('span', { class: 'k' }));
      row.append(cell);
    }
    return row;
  },
  render(row, r) {
    const [time, kind, server, about, outcome, st, detail] = row.children as unknown as HTMLElement[];
    time.textContent = r.time;
    (kind.firstElementChild as HTMLElement).className = `codicon codicon-${GROUP_ICON[r.group] ?? 'circle-small'}`;
    (kind.lastElementChild as HTMLElement).textContent = r.kind;
    server.textContent = r.server;
    about.textContent = r.about;
    outcome.textContent = r.outcome;
    outcome.className = `cell c-outcome ${OUTCOME_CLASS[r.outcome] ?? ''}`;
    st.textContent = r.status;
    detail.textContent = r.detail;
    row.title = rowSummary(r);
    row.dataset.id = String(r.id);
  },
  onSelect(r, _i, openIt) {
    ui.selectedLog = r.id;
    save();
    if (openIt) openDetails(r);
    else if (!details.hidden) openDetails(r);
  },
  onScroll(top) {
    ui.scroll.log = top;
    save();
  },
});

function eventAt(i: number): Record<string, unknown> {
  return (events[i] ??= parseEvent(lines[i]));
}

function rowAt(i: number): LogRow {
  return (rowCache[i] ??= toRow({ id: ids[i], event: eventAt(i) }));
}

function allRows(): LogRow[] {
  for (let i = 0; i < lines.length; i++) rowAt(i);
  return rowCache as LogRow[];
}

function* allEvents(): Generator<Record<string, unknown>> {
  for (let i = 0; i < lines.length; i++) yield eventAt(i);
}

function openDetails(r: LogRow): void {
  const k = indexById(ids, r.id);
  if (k < 0) return;
  const entry = { id: r.id, event: eventAt(k) };
  detailsTitle.textContent = ` ${r.kind}${r.server ? ` · ${r.server}` : ''}${r.about ? ` · ${r.about}` : ''} · ${r.at}`;
  detailsBody.textContent = detailsText(entry);
  details.hidden = false;
  sizeLog();
}

function closeDetails(): void {
  details.hidden = true;
  sizeLog();
  viewport.focus();
}

function sizeLog(): void {
  if (ui.tab !== 'log') return;
  const top = viewport.getBoundingClientRect().top;
  const below = (details.hidden ? 0 : details.getBoundingClientRect().height) + status.getBoundingClientRect().height + 12;
  viewport.style.height = `${Math.max(120, Math.floor(window.innerHeight - top - below))}px`;
  list.renderNow();
}
window.addEventListener('resize', () => sizeLog());

function options(el: VscodeSingleSelect, choices: [string, string][], value: string): void {
  const sig = JSON.stringify(choices);
  if (el.dataset.sig === sig) return;
  el.dataset.sig = sig;
  el.replaceChildren(...choices.map(([v, label]) => h('vscode-option', { attrs: { value: v, ...(v === value ? { selected: true } : {}) }, text: label })));
  el.value = value;
}

function refreshServerOptions(): void {
  const names = [...new Set([...(model?.serverNames ?? []), ...(logServers ?? [])])].sort();
  if (ui.filter.server && !names.includes(ui.filter.server)) names.push(ui.filter.server);
  options(serverSelect, [['', 'All servers'], ...names.map((n): [string, string] => [n, n])], ui.filter.server);
}
const outcomeChoices: [string, string][] = [['', 'All outcomes'], ...OUTCOME_CHOICES.map((o): [string, string] => [o, o])];
const kindChoices: [string, string][] = [['', 'All events'], ...KIND_GROUPS.map((k): [string, string] => [k, k === 'tool' ? 'tool.call / tool.result' : k === 'mcp.request' ? k : `${k}.*`])];
options(outcomeSelect, outcomeChoices, ui.filter.outcome);
options(kindSelect, kindChoices, ui.filter.kind);
search.value = ui.filter.text;

function applyFilter(keepScroll: boolean): void {
  const before = shownLength;
  const top = viewport.scrollTop;
  const filtered = !!(ui.filter.server || ui.filter.outcome || ui.filter.kind || ui.filter.text.trim());
  if (filtered) {
    const shown = filterRows(allRows(), ui.filter);
    shownLength = shown.length;
    list.setItems({ length: shown.length, at: (i) => shown[i], indexOf: (id) => shown.findIndex((r) => r.id === id) });
  } else {
    // Newest first, straight from the lines: nothing is made for rows out of view.
    const n = lines.length;
    shownLength = n;
    list.setItems({ length: n, at: (i) => rowAt(n - 1 - i), indexOf: (id) => { const k = indexById(ids, id); return k < 0 ? -1 : n - 1 - k; } });
  }
  // New events arrive at the top (newest first): keep what the reader is looking at in place.
  if (keepScroll && top > 0 && shownLength > before) list.scrollTo(top + (shownLength - before) * ROW_HEIGHT);
  const eventsText = (n: number) => `${n} event${n === 1 ? '' : 's'}`;
  logCount.textContent = filtered ? `${shownLength} of ${eventsText(lines.length)}` : `${eventsText(lines.length)}${truncated ? ` (the ${truncated} oldest are not shown)` : ''}`;
  logEmpty.hidden = shownLength > 0;
  logEmpty.textContent = lines.length ? 'No event matches the filters.' : 'No event logged yet: exchanges with servers, tool calls and decisions appear here.';
  badges.log.textContent = String(lines.length);
}

let searchTimer: ReturnType<typeof setTimeout> | undefined;
search.addEventListener('input', () => {
  if (searchTimer) clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    ui.filter.text = search.value;
    save();
    applyFilter(false);
  }, 60);
});
for (const [el, k] of [[serverSelect, 'server'], [outcomeSelect, 'outcome'], [kindSelect, 'kind']] as const) {
  el.addEventListener('change', () => {
    ui.filter[k] = el.value;
    save();
    applyFilter(false);
  });
}
clearFilters.addEventListener('click', () => {
  ui.filter = { server: '', outcome: '', kind: '', text: '' };
  search.value = '';
  serverSelect.value = '';
  outcomeSelect.value = '';
  kindSelect.value = '';
  save();
  applyFilter(false);
});

// The server filter lists the servers seen in the log: found after the first paint, when every line is parsed.
let logServers: string[] | undefined;
let serversTimer: ReturnType<typeof setTimeout> | undefined;
function scheduleLogServers(): void {
  if (serversTimer) return;
  serversTimer = setTimeout(() => {
    serversTimer = undefined;
    logServers = serversIn(allEvents());
    refreshServerOptions();
  }, 50);
}

let firstLog = true;
let restoredScroll = false;
function onLog(m: Extract<HostMessage, { type: 'log' }>): void {
  const b = unbatch(m.batch);
  if (m.reset) {
    lines = b.lines;
    ids = b.ids;
    events = new Array(lines.length);
    rowCache = new Array(lines.length);
  } else {
    lines.push(...b.lines);
    ids.push(...b.ids);
    events.length = lines.length;
    rowCache.length = lines.length;
  }
  truncated = m.truncated ?? truncated;
  if (lines.length > MAX_ENTRIES) {
    const drop = lines.length - MAX_ENTRIES;
    lines.splice(0, drop);
    ids.splice(0, drop);
    events.splice(0, drop);
    rowCache.splice(0, drop);
    truncated += drop;
  }
  scheduleLogServers();
  refreshServerOptions();
  applyFilter(!m.reset);
  if (firstLog) {
    firstLog = false;
    list.selectedId = ui.selectedLog;
    if (ui.tab === 'log') {
      sizeLog();
      if (ui.scroll.log) list.scrollTo(ui.scroll.log);
    }
    performance.mark('mcp-gate:log-rendered');
  }
}

/** Brings every control in line with `ui` (after the host's newer copy of the state arrived). */
function applyUi(): void {
  tabs.selectedIndex = TABS.indexOf(ui.tab);
  search.value = ui.filter.text;
  for (const el of [serverSelect, outcomeSelect, kindSelect]) delete el.dataset.sig;
  refreshServerOptions();
  options(outcomeSelect, outcomeChoices, ui.filter.outcome);
  options(kindSelect, kindChoices, ui.filter.kind);
  cards.clear();
  renderServers();
  list.selectedId = ui.selectedLog;
  applyFilter(false);
  if (ui.tab === 'log') {
    requestAnimationFrame(() => {
      sizeLog();
      if (ui.scroll.log) list.scrollTo(ui.scroll.log);
    });
  }
}

// ---- messages from the host ---------------------------------------------------------------------------------
window.addEventListener('message', (e: MessageEvent) => {
  const m = e.data as HostMessage;
  if (!m || typeof m !== 'object') return;
  switch (m.type) {
    case 'model':
      model = m.model;
      for (const k of [...busy]) busy.delete(k);
      renderModel();
      if (ui.tab !== 'log' && ui.scroll[ui.tab] && !restoredScroll) {
        restoredScroll = true;
        document.scrollingElement?.scrollTo(0, ui.scroll[ui.tab] ?? 0);
      }
      break;
    case 'log':
      onLog(m);
      break;
    case 'ui': {
      const incoming = sanitizeUiState(m.state);
      if ((incoming.savedAt ?? 0) > (ui.savedAt ?? 0)) {
        ui = incoming;
        applyUi();
      }
      break;
    }
    case 'result':
      busy.delete(m.key);
      setStatus(m.text, m.ok ? 'info' : 'error');
      renderServers();
      break;
  }
});
window.addEventListener('scroll', () => {
  if (ui.tab !== 'log') {
    ui.scroll[ui.tab] = document.scrollingElement?.scrollTop ?? 0;
    save();
  }
}, { passive: true });

performance.mark('mcp-gate:ready');
post({ type: 'ready' });
