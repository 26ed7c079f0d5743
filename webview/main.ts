// The trust panel's webview: Waiting (pending and changed servers), Decided (approved, rejected, blocked, trusted)
// and Log (the exchange log, virtualised, filtered, searchable). It renders what the extension host sends and
// asks the host to act; it decides nothing itself. Every string from the host is display text (escaped and masked
// there) and is only ever set as textContent or an attribute value. UI state (tab, filters, what is expanded,
// scroll) is kept with setState, so it survives a reload and a window restart. This file only wires the views of
// browser/ together: the page's skeleton, the tabs, and which view renders which message from the host.
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
import type { VscodeTabs } from '@vscode-elements/elements/dist/vscode-tabs/vscode-tabs.js';
import { createHeader } from './browser/banners';
import { PanelContext, type VsCodeApi } from './browser/context';
import { keepTimesCurrent } from './browser/display';
import { h, icon } from './browser/dom';
import { createLogView } from './browser/log-view';
import { createServerLists } from './browser/server-lists';
import { createStatusLine } from './browser/status';
import type { HostMessage } from './common/protocol';
import { sanitizeUiState, TABS } from './common/ui-state';

declare function acquireVsCodeApi(): VsCodeApi;

performance.mark('mcp-gate:start');
const ctx = new PanelContext(acquireVsCodeApi());

// ---- skeleton -----------------------------------------------------------------------------------------------
const app = document.getElementById('app')!;
const header = createHeader();
const status = createStatusLine();
const badge = () => h('vscode-badge', { attrs: { variant: 'counter' }, text: '0' });
const badges = { waiting: badge(), decided: badge(), log: badge() };
const servers = createServerLists(ctx, status, badges);
const log = createLogView(ctx, status.element, badges.log);

const tabs = h(
  'vscode-tabs',
  { attrs: { 'selected-index': String(TABS.indexOf(ctx.ui.tab)) } },
  h('vscode-tab-header', { attrs: { slot: 'header', 'data-tab': 'waiting' } }, icon('bell'), ' Waiting ', badges.waiting),
  h('vscode-tab-panel', {}, servers.waiting),
  h('vscode-tab-header', { attrs: { slot: 'header', 'data-tab': 'decided' } }, icon('checklist'), ' Decided ', badges.decided),
  h('vscode-tab-panel', {}, servers.decided),
  h('vscode-tab-header', { attrs: { slot: 'header', 'data-tab': 'log' } }, icon('output'), ' Log ', badges.log),
  h('vscode-tab-panel', {}, log.element),
) as VscodeTabs;

app.append(header.bar, header.banners, tabs, status.element);
app.removeAttribute('aria-busy');

// ---- tabs ---------------------------------------------------------------------------------------------------
tabs.addEventListener('vsc-tabs-select', (e) => {
  const { ui } = ctx;
  ui.scroll[ui.tab] = ui.tab === 'log' ? log.scrollTop() : (document.scrollingElement?.scrollTop ?? 0);
  ui.tab = TABS[e.detail.selectedIndex] ?? 'waiting';
  ctx.save();
  if (ui.tab === 'log') log.shown();
});

keepTimesCurrent();
log.init();

function renderModel(): void {
  if (!ctx.model) return;
  header.render(ctx.model);
  servers.render();
  log.refreshServerOptions();
}

/** Brings every control in line with `ui` (after the host's newer copy of the state arrived). */
function applyUi(): void {
  tabs.selectedIndex = TABS.indexOf(ctx.ui.tab);
  servers.rerender();
  log.applyUi();
}

// ---- messages from the host ---------------------------------------------------------------------------------
let restoredScroll = false;
window.addEventListener('message', (e: MessageEvent) => {
  const m = e.data as HostMessage;
  if (!m || typeof m !== 'object') return;
  const { ui } = ctx;
  switch (m.type) {
    case 'model':
      ctx.model = m.model;
      servers.clearBusy();
      renderModel();
      if (ui.tab !== 'log' && ui.scroll[ui.tab] && !restoredScroll) {
        restoredScroll = true;
        document.scrollingElement?.scrollTo(0, ui.scroll[ui.tab] ?? 0);
      }
      break;
    case 'log':
      log.onLog(m);
      break;
    case 'ui': {
      const incoming = sanitizeUiState(m.state);
      if ((incoming.savedAt ?? 0) > (ui.savedAt ?? 0)) {
        ctx.ui = incoming;
        applyUi();
      }
      break;
    }
    case 'result':
      servers.finished(m.key);
      status.set(m.text, m.ok ? 'info' : 'error');
      servers.render();
      break;
  }
});
window.addEventListener(
  'scroll',
  () => {
    if (ctx.ui.tab !== 'log') {
      ctx.ui.scroll[ctx.ui.tab] = document.scrollingElement?.scrollTop ?? 0;
      ctx.save();
    }
  },
  { passive: true },
);

performance.mark('mcp-gate:ready');
ctx.post({ type: 'ready' });
