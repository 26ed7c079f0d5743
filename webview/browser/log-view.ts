// The Log tab: the exchange log, newest first, in a virtualised grid (only rows in view are made), with its
// filters (server, outcome, kind, text search), its count on the tab badge and a details pane for the selected
// event. The log is kept as the JSON lines the host sends (at most 50,000, oldest dropped); events and rows are made
// from them on demand (only those in view, until a filter needs them all: ./log-entries.ts).
import type { VscodeSingleSelect } from '@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js';
import type { VscodeTextfield } from '@vscode-elements/elements/dist/vscode-textfield/vscode-textfield.js';
import { detailsText, filterRows, KIND_GROUPS, OUTCOME_CHOICES, rowSummary, serversIn, type LogRow } from '../common/log-model';
import type { HostMessage } from '../common/protocol';
import type { PanelContext } from './context';
import { codicon, h, icon } from './dom';
import { LogEntries } from './log-entries';
import { VirtualList } from './virtual-list';

const ROW_HEIGHT = 22;
const GROUP_ICON: Record<string, string> = {
  'mcp.request': 'arrow-swap',
  tool: 'tools',
  gate: 'shield',
  server: 'server-process',
  secret: 'key',
  network: 'globe',
  other: 'circle-small',
};
const OUTCOME_CLASS: Record<string, string> = {
  answered: 'ok',
  ok: 'ok',
  refused_by_policy: 'bad',
  refused_by_address: 'bad',
  error: 'bad',
  redirected: 'warn',
  no_answer: 'warn',
};

export interface LogView {
  readonly element: HTMLElement;
  /** Sets the filters from the UI state and listens to them; called once the panel is in the page. */
  init(): void;
  /** Where the log is scrolled to. */
  scrollTop(): number;
  /** The Log tab was selected: size the grid to the window and fill it. */
  shown(): void;
  /** The server filter's choices: the model's servers and those seen in the log. */
  refreshServerOptions(): void;
  onLog(m: Extract<HostMessage, { type: 'log' }>): void;
  /** Brings the filters, the selection and the scroll in line with a replaced UI state. */
  applyUi(): void;
}

export function createLogView(ctx: PanelContext, status: HTMLElement, badge: HTMLElement): LogView {
  return new LogTab(ctx, status, badge);
}

class LogTab implements LogView {
  readonly element: HTMLElement;
  private readonly log = new LogEntries();
  private shownLength = 0;
  private readonly c: LogControls;
  private readonly list: VirtualList<LogRow>;
  /** The servers seen in the log: found after the first paint, when every line is parsed (the server filter lists them). */
  private logServers: string[] | undefined;
  private serversTimer: ReturnType<typeof setTimeout> | undefined;
  private firstLog = true;

  constructor(
    private readonly ctx: PanelContext,
    private readonly status: HTMLElement,
    private readonly badge: HTMLElement,
  ) {
    this.c = logControls(() => this.closeDetails());
    this.element = this.c.element;
    this.list = new VirtualList<LogRow>({
      viewport: this.c.viewport,
      rowHeight: ROW_HEIGHT,
      createRow: createLogRow,
      render: renderLogRow,
      onSelect: (r, _i, openIt) => {
        ctx.ui.selectedLog = r.id;
        ctx.save();
        if (openIt) this.openDetails(r);
        else if (!this.c.details.hidden) this.openDetails(r);
      },
      onScroll: (top) => {
        ctx.ui.scroll.log = top;
        ctx.save();
      },
    });
  }

  private openDetails(r: LogRow): void {
    const k = this.log.indexOf(r.id);
    if (k < 0) return;
    const entry = { id: r.id, event: this.log.eventAt(k) };
    this.c.detailsTitle.textContent = ` ${r.kind}${r.server ? ` · ${r.server}` : ''}${r.about ? ` · ${r.about}` : ''} · ${r.at}`;
    this.c.detailsBody.textContent = detailsText(entry);
    this.c.details.hidden = false;
    this.sizeLog();
  }

  private closeDetails(): void {
    this.c.details.hidden = true;
    this.sizeLog();
    this.c.viewport.focus();
  }

  private sizeLog(): void {
    if (this.ctx.ui.tab !== 'log') return;
    const { viewport, details } = this.c;
    const top = viewport.getBoundingClientRect().top;
    const below = (details.hidden ? 0 : details.getBoundingClientRect().height) + this.status.getBoundingClientRect().height + 12;
    viewport.style.height = `${Math.max(120, Math.floor(window.innerHeight - top - below))}px`;
    this.list.renderNow();
  }

  private scheduleLogServers(): void {
    if (this.serversTimer) return;
    this.serversTimer = setTimeout(() => {
      this.serversTimer = undefined;
      this.logServers = serversIn(this.log.allEvents());
      this.refreshServerOptions();
    }, 50);
  }

  refreshServerOptions(): void {
    const { filter } = this.ctx.ui;
    const names = [...new Set([...(this.ctx.model?.serverNames ?? []), ...(this.logServers ?? [])])].sort();
    if (filter.server && !names.includes(filter.server)) names.push(filter.server);
    options(this.c.serverSelect, [['', 'All servers'], ...names.map((n): [string, string] => [n, n])], filter.server);
  }

  private applyFilter(keepScroll: boolean): void {
    const { filter } = this.ctx.ui;
    const { log, list } = this;
    const before = this.shownLength;
    const top = this.c.viewport.scrollTop;
    const filtered = !!(filter.server || filter.outcome || filter.kind || filter.text.trim());
    if (filtered) {
      const shown = filterRows(log.allRows(), filter);
      this.shownLength = shown.length;
      list.setItems({ length: shown.length, at: (i) => shown[i], indexOf: (id) => shown.findIndex((r) => r.id === id) });
    } else {
      // Newest first, straight from the lines: nothing is made for rows out of view.
      const n = log.lines.length;
      this.shownLength = n;
      list.setItems({
        length: n,
        at: (i) => log.rowAt(n - 1 - i),
        indexOf: (id) => {
          const k = log.indexOf(id);
          return k < 0 ? -1 : n - 1 - k;
        },
      });
    }
    // New events arrive at the top (newest first): keep what the reader is looking at in place.
    if (keepScroll && top > 0 && this.shownLength > before) list.scrollTo(top + (this.shownLength - before) * ROW_HEIGHT);
    this.c.logCount.textContent = countText(filtered, this.shownLength, log.lines.length, log.truncated);
    this.c.logEmpty.hidden = this.shownLength > 0;
    this.c.logEmpty.textContent = log.lines.length
      ? 'No event matches the filters.'
      : 'No event logged yet: exchanges with servers, tool calls and decisions appear here.';
    this.badge.textContent = String(log.lines.length);
  }

  init(): void {
    window.addEventListener('resize', () => this.sizeLog());
    options(this.c.outcomeSelect, OUTCOME_OPTIONS, this.ctx.ui.filter.outcome);
    options(this.c.kindSelect, KIND_OPTIONS, this.ctx.ui.filter.kind);
    this.c.search.value = this.ctx.ui.filter.text;
    listenToFilters(this.c, this.ctx, () => this.applyFilter(false));
  }

  scrollTop(): number {
    return this.c.viewport.scrollTop;
  }

  shown(): void {
    requestAnimationFrame(() => {
      this.sizeLog();
      this.list.renderNow();
    });
  }

  onLog(m: Extract<HostMessage, { type: 'log' }>): void {
    this.log.add(m);
    this.scheduleLogServers();
    this.refreshServerOptions();
    this.applyFilter(!m.reset);
    if (this.firstLog) {
      this.firstLog = false;
      this.list.selectedId = this.ctx.ui.selectedLog;
      if (this.ctx.ui.tab === 'log') {
        this.sizeLog();
        if (this.ctx.ui.scroll.log) this.list.scrollTo(this.ctx.ui.scroll.log);
      }
      performance.mark('mcp-gate:log-rendered');
    }
  }

  applyUi(): void {
    const { ui } = this.ctx;
    this.c.search.value = ui.filter.text;
    for (const el of [this.c.serverSelect, this.c.outcomeSelect, this.c.kindSelect]) delete el.dataset.sig;
    this.refreshServerOptions();
    options(this.c.outcomeSelect, OUTCOME_OPTIONS, ui.filter.outcome);
    options(this.c.kindSelect, KIND_OPTIONS, ui.filter.kind);
    this.list.selectedId = ui.selectedLog;
    this.applyFilter(false);
    if (ui.tab === 'log') {
      requestAnimationFrame(() => {
        this.sizeLog();
        if (this.ctx.ui.scroll.log) this.list.scrollTo(this.ctx.ui.scroll.log);
      });
    }
  }
}

const OUTCOME_OPTIONS: [string, string][] = [['', 'All outcomes'], ...OUTCOME_CHOICES.map((o): [string, string] => [o, o])];
const KIND_OPTIONS: [string, string][] = [
  ['', 'All events'],
  ...KIND_GROUPS.map((k): [string, string] => [k, k === 'tool' ? 'tool.call / tool.result' : k === 'mcp.request' ? k : `${k}.*`]),
];

/** The Log tab's elements: the toolbar (search, filters, Clear filters, count), the grid, its empty line, the details pane. */
interface LogControls {
  element: HTMLElement;
  search: VscodeTextfield;
  serverSelect: VscodeSingleSelect;
  outcomeSelect: VscodeSingleSelect;
  kindSelect: VscodeSingleSelect;
  logCount: HTMLElement;
  clearFilters: HTMLElement;
  viewport: HTMLElement;
  details: HTMLElement;
  detailsTitle: HTMLElement;
  detailsBody: HTMLElement;
  logEmpty: HTMLElement;
}

/** Makes the Log tab's elements; the details pane's Close button calls `onClose`. */
function logControls(onClose: () => void): LogControls {
  const search = h(
    'vscode-textfield',
    { class: 'search', attrs: { placeholder: 'Search the log', 'aria-label': 'Search the log' } },
    icon('search'),
  ) as VscodeTextfield;
  search.firstElementChild?.setAttribute('slot', 'content-before');
  const select = (label: string) => h('vscode-single-select', { attrs: { 'aria-label': label } }) as VscodeSingleSelect;
  const serverSelect = select('Filter by server');
  const outcomeSelect = select('Filter by outcome');
  const kindSelect = select('Filter by kind');
  const logCount = h('span', { class: 'log-count' });
  const clearFilters = h('vscode-button', { attrs: { secondary: true, icon: 'clear-all' }, text: 'Clear filters' });
  const logHead = h(
    'div',
    { class: 'log-row log-head', attrs: { role: 'row' } },
    ...['Time', 'Event', 'Server', 'About', 'Outcome', 'Status', 'Detail'].map((t) =>
      h('span', { class: 'cell', text: t, attrs: { role: 'columnheader' } }),
    ),
  );
  const viewport = h('div', { class: 'log-viewport', attrs: { tabindex: '0', role: 'grid', 'aria-label': 'Exchange log, newest first' } });
  const detailsTitle = h('span', { class: 'details-title' });
  const detailsBody = h('pre', { class: 'details-body' });
  const details = h(
    'div',
    { class: 'log-details', attrs: { hidden: true, role: 'region', 'aria-label': 'Event details' } },
    h(
      'div',
      { class: 'details-bar' },
      codicon('info'),
      detailsTitle,
      h('vscode-button', { attrs: { secondary: true, icon: 'close' }, text: 'Close', on: { click: () => onClose() } }),
    ),
    detailsBody,
  );
  const logEmpty = h('div', { class: 'empty', attrs: { hidden: true } });
  const element = h(
    'div',
    { class: 'log', attrs: { id: 'log' } },
    h('div', { class: 'log-toolbar' }, search, serverSelect, outcomeSelect, kindSelect, clearFilters, logCount),
    logHead,
    viewport,
    logEmpty,
    details,
  );
  return {
    element,
    search,
    serverSelect,
    outcomeSelect,
    kindSelect,
    logCount,
    clearFilters,
    viewport,
    details,
    detailsTitle,
    detailsBody,
    logEmpty,
  };
}

/** Keeps the UI state's filters in step with the toolbar (the search after a pause in typing) and re-filters. */
function listenToFilters(c: LogControls, ctx: PanelContext, refilter: () => void): void {
  const { search, serverSelect, outcomeSelect, kindSelect } = c;
  let searchTimer: ReturnType<typeof setTimeout> | undefined;
  search.addEventListener('input', () => {
    if (searchTimer) clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      ctx.ui.filter.text = search.value;
      ctx.save();
      refilter();
    }, 60);
  });
  for (const [el, k] of [
    [serverSelect, 'server'],
    [outcomeSelect, 'outcome'],
    [kindSelect, 'kind'],
  ] as const) {
    el.addEventListener('change', () => {
      ctx.ui.filter[k] = el.value;
      ctx.save();
      refilter();
    });
  }
  c.clearFilters.addEventListener('click', () => {
    ctx.ui.filter = { server: '', outcome: '', kind: '', text: '' };
    search.value = '';
    serverSelect.value = '';
    outcomeSelect.value = '';
    kindSelect.value = '';
    ctx.save();
    refilter();
  });
}

/** One empty grid row: its seven cells (the kind's with an icon and a label). */
function createLogRow(): HTMLElement {
  const row = h('div', { class: 'log-row' });
  for (const c of ['time', 'kind', 'server', 'about', 'outcome', 'status', 'detail']) {
    const cell = h('span', { class: `cell c-${c}`, attrs: { role: 'gridcell' } });
    if (c === 'kind') cell.append(h('span', { class: 'codicon', attrs: { 'aria-hidden': 'true' } }), h('span', { class: 'k' }));
    row.append(cell);
  }
  return row;
}

/** Fills a grid row with one event's row. */
function renderLogRow(row: HTMLElement, r: LogRow): void {
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
}

/** A select's choices, replaced only when they changed (the value kept). */
function options(el: VscodeSingleSelect, choices: [string, string][], value: string): void {
  const sig = JSON.stringify(choices);
  if (el.dataset.sig === sig) return;
  el.dataset.sig = sig;
  el.replaceChildren(
    ...choices.map(([v, label]) => h('vscode-option', { attrs: { value: v, ...(v === value ? { selected: true } : {}) }, text: label })),
  );
  el.value = value;
}

/** The count beside the filters: shown of all when filtered, else all (and the oldest not shown). */
function countText(filtered: boolean, shown: number, total: number, truncated: number): string {
  const eventsText = (n: number) => `${n} event${n === 1 ? '' : 's'}`;
  return filtered
    ? `${shown} of ${eventsText(total)}`
    : `${eventsText(total)}${truncated ? ` (the ${truncated} oldest are not shown)` : ''}`;
}
