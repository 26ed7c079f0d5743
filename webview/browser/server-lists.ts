// The Waiting and Decided tabs: the servers of each section as cards (grouped by folder in a multi-root
// workspace), their counts on the tab badges, and which servers have an action under way. A card is remade only
// when what it shows changed, so an open collapsible or a focused button survives a refresh.
import type { PanelAction, ServerView } from '../common/protocol';
import type { PanelContext } from './context';
import { codicon, h } from './dom';
import { ACTION_LABEL, serverCard } from './server-card';
import type { StatusLine } from './status';

export interface ServerLists {
  readonly waiting: HTMLElement;
  readonly decided: HTMLElement;
  render(): void;
  /** Remakes every card (after the UI state was replaced). */
  rerender(): void;
  /** A new model arrived: no action is under way any more. */
  clearBusy(): void;
  /** The host answered the action on this server. */
  finished(key: string): void;
}

export function createServerLists(
  ctx: PanelContext,
  status: StatusLine,
  badges: { waiting: HTMLElement; decided: HTMLElement },
): ServerLists {
  const lists = {
    waiting: h('div', { class: 'servers', attrs: { id: 'waiting' } }),
    decided: h('div', { class: 'servers', attrs: { id: 'decided' } }),
  };
  const busy = new Set<string>();
  const cards = new Map<string, { sig: string; el: HTMLElement }>();

  function onAction(s: ServerView, a: PanelAction, card: HTMLElement): void {
    if (busy.has(s.key)) return;
    // One press: VS Code opens the definition (for a changed server, the change in its diff editor) and asks.
    busy.add(s.key);
    for (const b of card.querySelectorAll<HTMLElement>('.act')) b.setAttribute('disabled', '');
    status.set(
      a === 'approve' && (s.diff || s.toolsDiff)
        ? `VS Code shows the changes to ${s.name} side by side and asks whether to approve them.`
        : a === 'update'
          ? `VS Code asks the registry for ${s.name}'s package again and shows what changed before asking.`
          : `${ACTION_LABEL[a]} ${s.name}…`,
    );
    ctx.post({ type: 'action', action: a, key: s.key });
  }

  function render(): void {
    const model = ctx.model;
    if (!model) return;
    const seen = new Set<string>();
    for (const section of ['waiting', 'decided'] as const) {
      const container = lists[section];
      const order = new Map(model.folders.map((f, i) => [f.name, i]));
      const items = model.servers
        .filter((s) => s.section === section)
        .sort((a, b) => (order.get(a.folder) ?? 0) - (order.get(b.folder) ?? 0));
      const nodes: HTMLElement[] = [];
      let lastFolder: string | undefined;
      for (const s of items) {
        const sig = JSON.stringify([s, busy.has(s.key), model.folders.length > 1]);
        let c = cards.get(s.key);
        if (!c || c.sig !== sig) {
          c = { sig, el: serverCard(s, { ctx, status, busy: busy.has(s.key), onAction }) };
          cards.set(s.key, c);
        }
        seen.add(s.key);
        // In a multi-root workspace each folder is its own group, under its name.
        if (model.folders.length > 1 && s.folder !== lastFolder) nodes.push(h('h2', { class: 'folder-group', text: s.folder }));
        lastFolder = s.folder;
        nodes.push(c.el);
      }
      if (!items.length) {
        nodes.push(
          section === 'waiting'
            ? h(
                'div',
                { class: 'empty' },
                codicon('pass'),
                ' Nothing waits for review: every server this workspace declares has been decided.',
              )
            : h('div', { class: 'empty' }, codicon('info'), ' No server has been decided yet.'),
        );
      }
      container.replaceChildren(...nodes);
    }
    for (const k of [...cards.keys()]) if (!seen.has(k)) cards.delete(k);
    badges.waiting.textContent = String(model.counts.waiting);
    badges.decided.textContent = String(model.counts.decided);
  }

  return {
    ...lists,
    render,
    rerender() {
      cards.clear();
      render();
    },
    clearBusy() {
      for (const k of [...busy]) busy.delete(k);
    },
    finished(key) {
      busy.delete(key);
    },
  };
}
