// The Log tab: the exchange log, newest first, in a virtualised grid (only rows in view are made), with its
// filters (server, outcome, kind, text search), its count on the tab badge and a details pane for the selected
// event. The log is kept as the JSON lines the host sends (at most 50,000, oldest dropped); events and rows are made
// from them on demand (only those in view, until a filter needs them all).
import type { VscodeSingleSelect } from '@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js';
import type { VscodeTextfield } from '@vscode-elements/elements/dist/vscode-textfield/vscode-textfield.js';
import {
  detailsText,
  filterRows,
  indexById,
  KIND_GROUPS,
  OUTCOME_CHOICES,
  parseEvent,
  rowSummary,
  serversIn,
  toRow,
  unbatch,
  type LogRow,
} from '../common/log-model';
import type { HostMessage } from '../common/protocol';
import type { PanelContext } from './context';
import { codicon, h, icon } from './dom';
import { VirtualList } from './virtual-list';

const ROW_HEIGHT = 22;
const MAX_ENTRIES = 50_000;
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
  let lines: string[] = [];
  let ids: number[] = [];
  let events: (Record<string, unknown> | undefined)[] = [];
  let rowCache: (LogRow | undefined)[] = [];
  let shownLength = 0;
  let truncated = 0;

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
      h('vscode-button', { attrs: { secondary: true, icon: 'close' }, text: 'Close', on: { click: () => closeDetails() } }),
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
      ctx.ui.selectedLog = r.id;
      ctx.save();
      if (openIt) openDetails(r);
      else if (!details.hidden) openDetails(r);
    },
    onScroll(top) {
      ctx.ui.scroll.log = top;
      ctx.save();
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
    if (ctx.ui.tab !== 'log') return;
    const top = viewport.getBoundingClientRect().top;
    const below = (details.hidden ? 0 : details.getBoundingClientRect().height) + status.getBoundingClientRect().height + 12;
    viewport.style.height = `${Math.max(120, Math.floor(window.innerHeight - top - below))}px`;
    list.renderNow();
  }

  function options(el: VscodeSingleSelect, choices: [string, string][], value: string): void {
    const sig = JSON.stringify(choices);
    if (el.dataset.sig === sig) return;
    el.dataset.sig = sig;
    el.replaceChildren(
      ...choices.map(([v, label]) => h('vscode-option', { attrs: { value: v, ...(v === value ? { selected: true } : {}) }, text: label })),
    );
    el.value = value;
  }

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

  function refreshServerOptions(): void {
    const names = [...new Set([...(ctx.model?.serverNames ?? []), ...(logServers ?? [])])].sort();
    if (ctx.ui.filter.server && !names.includes(ctx.ui.filter.server)) names.push(ctx.ui.filter.server);
    options(serverSelect, [['', 'All servers'], ...names.map((n): [string, string] => [n, n])], ctx.ui.filter.server);
  }
  const outcomeChoices: [string, string][] = [['', 'All outcomes'], ...OUTCOME_CHOICES.map((o): [string, string] => [o, o])];
  const kindChoices: [string, string][] = [
    ['', 'All events'],
    ...KIND_GROUPS.map((k): [string, string] => [k, k === 'tool' ? 'tool.call / tool.result' : k === 'mcp.request' ? k : `${k}.*`]),
  ];

  function applyFilter(keepScroll: boolean): void {
    const { filter } = ctx.ui;
    const before = shownLength;
    const top = viewport.scrollTop;
    const filtered = !!(filter.server || filter.outcome || filter.kind || filter.text.trim());
    if (filtered) {
      const shown = filterRows(allRows(), filter);
      shownLength = shown.length;
      list.setItems({ length: shown.length, at: (i) => shown[i], indexOf: (id) => shown.findIndex((r) => r.id === id) });
    } else {
      // Newest first, straight from the lines: nothing is made for rows out of view.
      const n = lines.length;
      shownLength = n;
      list.setItems({
        length: n,
        at: (i) => rowAt(n - 1 - i),
        indexOf: (id) => {
          const k = indexById(ids, id);
          return k < 0 ? -1 : n - 1 - k;
        },
      });
    }
    // New events arrive at the top (newest first): keep what the reader is looking at in place.
    if (keepScroll && top > 0 && shownLength > before) list.scrollTo(top + (shownLength - before) * ROW_HEIGHT);
    const eventsText = (n: number) => `${n} event${n === 1 ? '' : 's'}`;
    logCount.textContent = filtered
      ? `${shownLength} of ${eventsText(lines.length)}`
      : `${eventsText(lines.length)}${truncated ? ` (the ${truncated} oldest are not shown)` : ''}`;
    logEmpty.hidden = shownLength > 0;
    logEmpty.textContent = lines.length
      ? 'No event matches the filters.'
      : 'No event logged yet: exchanges with servers, tool calls and decisions appear here.';
    badge.textContent = String(lines.length);
  }

  function init(): void {
    window.addEventListener('resize', () => sizeLog());
    options(outcomeSelect, outcomeChoices, ctx.ui.filter.outcome);
    options(kindSelect, kindChoices, ctx.ui.filter.kind);
    search.value = ctx.ui.filter.text;

    let searchTimer: ReturnType<typeof setTimeout> | undefined;
    search.addEventListener('input', () => {
      if (searchTimer) clearTimeout(searchTimer);
      searchTimer = setTimeout(() => {
        ctx.ui.filter.text = search.value;
        ctx.save();
        applyFilter(false);
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
        applyFilter(false);
      });
    }
    clearFilters.addEventListener('click', () => {
      ctx.ui.filter = { server: '', outcome: '', kind: '', text: '' };
      search.value = '';
      serverSelect.value = '';
      outcomeSelect.value = '';
      kindSelect.value = '';
      ctx.save();
      applyFilter(false);
    });
  }

  let firstLog = true;
  function onLog(m: Extract<HostMessage, { type: 'log' }>): void {
    const b = unbatch(m.batch);
    if (m.reset) {
      lines = b.lines;
      ids = b.ids;
      events = new Array<Record<string, unknown> | undefined>(lines.length);
      rowCache = new Array<LogRow | undefined>(lines.length);
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
      list.selectedId = ctx.ui.selectedLog;
      if (ctx.ui.tab === 'log') {
        sizeLog();
        if (ctx.ui.scroll.log) list.scrollTo(ctx.ui.scroll.log);
      }
      performance.mark('mcp-gate:log-rendered');
    }
  }

  function applyUi(): void {
    search.value = ctx.ui.filter.text;
    for (const el of [serverSelect, outcomeSelect, kindSelect]) delete el.dataset.sig;
    refreshServerOptions();
    options(outcomeSelect, outcomeChoices, ctx.ui.filter.outcome);
    options(kindSelect, kindChoices, ctx.ui.filter.kind);
    list.selectedId = ctx.ui.selectedLog;
    applyFilter(false);
    if (ctx.ui.tab === 'log') {
      requestAnimationFrame(() => {
        sizeLog();
        if (ctx.ui.scroll.log) list.scrollTo(ctx.ui.scroll.log);
      });
    }
  }

  return {
    element,
    init,
    scrollTop: () => viewport.scrollTop,
    shown() {
      requestAnimationFrame(() => {
        sizeLog();
        list.renderNow();
      });
    },
    refreshServerOptions,
    onLog,
    applyUi,
  };
}
