// One server's card: its state, why, its actions (Approve…, Reject…, Reset, Update package…, Open file), where it is declared and
// what it runs, its changes since approval (server-diff.ts) and its definition as written with the launch plan,
// sandbox, pinned files and digest.
import type { VscodeCollapsible } from '@vscode-elements/elements/dist/vscode-collapsible/vscode-collapsible.js';
import type { PanelAction, ServerView } from '../common/protocol';
import { relativeTime } from '../../src/text/time';
import { STATE_CODICON } from '../../src/trust/approval/gate-state';
import type { PanelContext } from './context';
import { digest, meta, when } from './display';
import { codicon, h, icon } from './dom';
import { changeParts } from './server-diff';
import type { StatusLine } from './status';

const STATE_ICON: Record<string, string> = STATE_CODICON;
export const ACTION_LABEL: Record<PanelAction, string> = { approve: 'Approve', reject: 'Reject', reset: 'Reset', update: 'Update' };
const ACTION_ICON: Record<PanelAction, string> = { approve: 'check', reject: 'close', reset: 'discard', update: 'cloud-download' };

export interface CardContext {
  ctx: PanelContext;
  status: StatusLine;
  /** An action on this server is under way: its buttons are disabled. */
  busy: boolean;
  onAction(s: ServerView, a: PanelAction, card: HTMLElement): void;
}

function collapsible(
  part: 'def' | 'diff',
  heading: string,
  description: string,
  open: boolean,
  ...content: HTMLElement[]
): VscodeCollapsible {
  const c = h('vscode-collapsible', { class: `part-${part}`, attrs: { heading, description } }, ...content) as VscodeCollapsible;
  c.open = open;
  return c;
}

/**
 * Whether a card shows its details (where it is declared, what it runs, its changes and definition): kept per
 * server in the UI state; by default open while it waits for a decision, collapsed once decided, so a list of
 * decided servers reads as one line each (name, state, why, actions).
 */
export function cardOpen(ctx: PanelContext, s: Pick<ServerView, 'key' | 'section'>): boolean {
  return ctx.ui.expanded[s.key] ?? s.section === 'waiting';
}

/**
 * The head's toggle: an action icon (a button inside vscode-icon: Enter/Space, a label for screen readers) that
 * shows or hides the card's details and keeps the choice. aria-expanded is on the element the panel makes.
 */
function cardToggle(ctx: PanelContext, s: ServerView, card: HTMLElement, body: HTMLElement): HTMLElement {
  const b = h('vscode-icon', {
    class: 'card-toggle',
    attrs: { 'action-icon': true, 'aria-controls': `body-${s.key}`, title: 'Show or hide the details' },
  });
  const set = (open: boolean) => {
    body.hidden = !open;
    card.classList.toggle('collapsed', !open);
    b.setAttribute('aria-expanded', String(open));
    b.setAttribute('name', open ? 'chevron-down' : 'chevron-right');
    b.setAttribute('label', `${open ? 'Hide' : 'Show'} the details of ${s.name}`);
  };
  set(cardOpen(ctx, s));
  b.addEventListener('click', () => {
    const open = body.hidden;
    set(open);
    ctx.ui.expanded[s.key] = open;
    ctx.save();
  });
  return b;
}

export function serverCard(s: ServerView, o: CardContext): HTMLElement {
  const { ctx, status } = o;
  const card = h('section', { class: `card state-${s.state}`, attrs: { 'data-key': s.key, 'aria-label': `${s.name}, ${s.stateLabel}` } });
  const actions = cardActions(s, o, card);

  const body = h('div', { class: 'card-body', attrs: { id: `body-${s.key}` } });
  card.append(
    h(
      'div',
      { class: 'head' },
      cardToggle(ctx, s, card, body),
      icon(STATE_ICON[s.state] ?? 'circle', s.stateLabel),
      h('h3', { class: 'name', text: s.name }),
      h('span', { class: `state state-${s.state}`, text: s.stateLabel }),
      h('span', { class: 'source', text: s.declared.source }),
      actions,
    ),
  );
  card.append(h('p', { class: 'reason', text: s.reason }));
  // What its code does (that it did not at approval), first: src/report/risk-text.ts.
  if (s.risk) card.append(h('p', { class: 'risk', text: s.risk }));
  card.append(body);

  body.append(cardMeta(s, ctx));

  if (s.hidden) {
    body.append(
      h(
        'div',
        { class: 'warn hidden-chars', attrs: { role: 'note' } },
        codicon('warning'),
        ' This definition contains invisible, control or reordering characters. Each is shown as an escape (such as \\u202E); nothing is hidden or cut.',
      ),
    );
  }

  const changed = !!(s.diff || s.toolsDiff);
  if (changed) {
    const parts = changeParts(s);
    const at = s.diff?.approvedAt ?? s.decidedAt;
    const since = at ? `approved ${relativeTime(at, Date.now(), navigator.language)}` : '';
    const c = collapsible('diff', 'Changes since approval', since, true, ...parts);
    c.classList.add('changes');
    body.append(c);
  }

  const def = definitionParts(s, status);
  body.append(collapsible('def', 'Definition as written', s.declared.source, s.section === 'waiting', ...def));
  return card;
}

/** The card's action buttons (those the server offers, then Open file); an action's click goes to `o.onAction`. */
function cardActions(s: ServerView, o: CardContext, card: HTMLElement): HTMLElement {
  const { ctx } = o;
  const actions = h('div', { class: 'actions' });
  for (const a of s.actions) {
    const b = h('vscode-button', {
      class: `act act-${a}`,
      attrs: {
        icon: ACTION_ICON[a],
        ...(a === 'approve' ? {} : { secondary: true }),
        ...(o.busy ? { disabled: true } : {}),
        'data-action': a,
      },
      text:
        a === 'approve' && (s.diff || s.toolsDiff)
          ? 'Review changes and approve…'
          : a === 'approve'
            ? 'Approve…'
            : a === 'reject'
              ? 'Reject…'
              : a === 'update'
                ? 'Update package…'
                : ACTION_LABEL[a],
    });
    b.addEventListener('click', () => o.onAction(s, a, card));
    actions.append(b);
  }
  const open = h('vscode-button', {
    class: 'act act-open',
    attrs: { secondary: true, icon: 'go-to-file', title: 'Open the file that declares it' },
    text: 'Open file',
  });
  open.addEventListener('click', () => ctx.post({ type: 'open', key: s.key }));
  actions.append(open);

  return actions;
}

/** Where the server is declared and what it runs: scope, importers, folder, command or URL, decision, team signer. */
function cardMeta(s: ServerView, ctx: PanelContext): HTMLElement {
  const dl = h('dl', { class: 'meta' });
  // Repository files by their workspace-relative path; the full path on hover.
  const declared = s.declared.scope === 'repository' ? s.declared.source : s.declared.file;
  dl.append(
    ...meta('Declared in', h('code', { text: `${declared}:${s.declared.line}:${s.declared.column}`, attrs: { title: s.declared.file } })),
  );
  // "repository scope, gated" is what every waiting server is; the line is shown only where it says more.
  if (!s.gated || s.declared.scope !== 'repository')
    dl.append(
      ...meta(
        'Scope',
        `${s.declared.scope} scope, ${s.gated ? 'gated: runs only once approved' : 'trusted: written by a person on this machine'}`,
      ),
    );
  if (s.declared.importedBy.length)
    dl.append(...meta('Imported by', ...s.declared.importedBy.flatMap((f, i) => [i ? ', ' : '', h('code', { text: f })])));
  if (ctx.model && ctx.model.folders.length > 1) dl.append(...meta('Folder', s.folder));
  dl.append(...meta(s.transport === 'http' ? 'Connects to' : 'Runs', h('code', { class: 'summary', text: s.summary })));
  if (s.cwd) dl.append(...meta('In folder', h('code', { text: s.cwd })));
  if (s.decidedAt) dl.append(...meta('Decided', when(s.decidedAt)));
  if (s.approvedBy) {
    dl.append(
      ...meta(
        'Approved by',
        h('strong', { class: 'approved-by', text: s.approvedBy.by }),
        ` (team file, key `,
        h('code', { text: s.approvedBy.key, attrs: { title: s.approvedBy.file } }),
        `, signed `,
        when(s.approvedBy.at),
        ')',
      ),
    );
  }
  return dl;
}

/** The definition as written and what was made of it: launch plan, sandbox, pinned files, inputs, tools, digest. */
function definitionParts(s: ServerView, status: StatusLine): HTMLElement[] {
  const def: HTMLElement[] = [h('pre', { class: 'definition', text: s.definition })];
  if (s.plan) def.push(...planParts(s.plan));
  if (s.sandbox?.length) {
    def.push(h('h4', { text: 'Sandbox' }));
    def.push(
      h(
        'ul',
        { class: `sandbox${s.sandbox[0].startsWith('contained') ? '' : ' uncontained'}` },
        ...s.sandbox.map((l) => h('li', { text: l })),
      ),
    );
  }
  if (s.pinnedFiles.length) {
    def.push(h('h4', { text: 'Files it can execute or load (content pinned)' }));
    const t = h(
      'table',
      { class: 'files' },
      h('tr', {}, h('th', { text: 'File' }), h('th', { text: 'Bytes' }), h('th', { text: 'SHA-256' })),
    );
    for (const f of s.pinnedFiles)
      t.append(
        h('tr', {}, h('td', {}, h('code', { text: f.path })), h('td', { text: String(f.size) }), h('td', {}, digest(f.sha256, status))),
      );
    def.push(t);
  }
  if (s.envFile) def.push(h('p', {}, 'envFile ', h('code', { text: s.envFile })));
  if (s.inputs) def.push(h('h4', { text: 'Inputs it asks for' }), h('pre', { class: 'definition', text: s.inputs }));
  if (s.pinnedTools?.length)
    def.push(
      h(
        'p',
        { class: 'tools' },
        `Tools pinned at the first start: `,
        ...s.pinnedTools.flatMap((t, i) => [i ? ', ' : '', h('code', { text: t })]),
      ),
    );
  if (s.digest) def.push(h('p', { class: 'digest' }, 'digest ', digest(s.digest, status)));
  return def;
}

/** The launch plan: program, arguments, folder and variables, the folders pinned whole, what the load guard checks. */
function planParts(plan: NonNullable<ServerView['plan']>): HTMLElement[] {
  const parts: HTMLElement[] = [];
  parts.push(h('h4', { text: 'Launch plan: what will be executed' }));
  const rows: [string, string][] = [
    ['Program', plan.program],
    ['Arguments', plan.args],
    ['Folder', plan.folder],
  ];
  if (plan.variables) rows.push(['Variables', plan.variables]);
  const pt = h('table', { class: 'files plan' });
  for (const [k, v] of rows) pt.append(h('tr', {}, h('th', { text: k }), h('td', {}, h('code', { text: v }))));
  parts.push(pt);
  if (plan.roots.length) {
    parts.push(h('h4', { text: 'Execution closure: folders pinned whole' }));
    const rt = h('table', { class: 'files roots' });
    for (const r of plan.roots) rt.append(h('tr', {}, h('td', {}, h('code', { text: r.path })), h('td', { text: r.why })));
    parts.push(rt);
  }
  if (plan.guarded) {
    parts.push(h('h4', { text: 'Checked when it loads (the load guard)' }));
    parts.push(
      h('p', {
        text: 'Every other file its Node and Python processes load is checked against the workspace as it is when you approve: a file changed or added since is refused before it runs, and the server is stopped.',
      }),
    );
    if (plan.guarded.length) parts.push(h('ul', { class: 'guarded' }, ...plan.guarded.map((g) => h('li', { text: g }))));
  }
  return parts;
}
