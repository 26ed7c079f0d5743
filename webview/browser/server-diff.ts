// A changed server's diff, as its card shows it under "Changes since approval": the changed fields, the files it
// runs, the tools it offers and the server's instructions, each as added/removed lines.
import type { DiffLine, ServerView } from '../common/protocol';
import { when } from './display';
import { codicon, h } from './dom';

export function diffBlock(lines: DiffLine[], label: string): HTMLElement {
  const block = h('div', { class: 'diff', attrs: { role: 'group', 'aria-label': label } });
  for (const l of lines) {
    const mark = l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : l.kind === 'note' ? '' : ' ';
    block.append(
      h(
        'div',
        { class: `dl ${l.kind}` },
        h('span', { class: 'mark', text: mark, attrs: { 'aria-hidden': 'true' } }),
        h('span', {
          class: 'txt',
          text: l.text,
          attrs: l.kind === 'add' ? { 'aria-label': `added: ${l.text}` } : l.kind === 'del' ? { 'aria-label': `removed: ${l.text}` } : {},
        }),
      ),
    );
  }
  return block;
}

/** What changed since the approval (the definition's fields and files, the tools), or nothing for an unchanged server. */
export function changeParts(s: ServerView): HTMLElement[] {
  const parts: HTMLElement[] = [];
  if (s.diff) {
    if (s.diff.fields.length) parts.push(h('h4', { text: 'Changed fields' }));
    for (const f of s.diff.fields)
      parts.push(
        h(
          'div',
          { class: 'diff-item field' },
          h('div', { class: 'diff-title' }, codicon('symbol-field'), ' field ', h('code', { text: f.field })),
          diffBlock(f.lines, `field ${f.field}`),
        ),
      );
    if (s.diff.files.length) parts.push(h('h4', { text: 'Files it runs' }));
    for (const f of s.diff.files) {
      parts.push(
        h(
          'div',
          { class: 'diff-item file' },
          h(
            'div',
            { class: 'diff-title' },
            codicon('file'),
            ' ',
            h('code', { text: f.path }),
            ` ${f.change}`,
            f.digests ? h('span', { class: 'digests', text: ` (${f.digests})` }) : null,
          ),
          f.note ? h('p', { class: 'note', text: f.note }) : null,
          f.lines.length ? diffBlock(f.lines, `file ${f.path}`) : null,
        ),
      );
    }
  }
  if (s.toolsDiff) {
    // Times as everywhere in the panel: relative, exact on hover (display.ts when).
    parts.push(
      h(
        'h4',
        {},
        'Tools it offers (seen ',
        when(s.toolsDiff.observedAt),
        ...(s.toolsDiff.approvedAt ? ['; pinned ', when(s.toolsDiff.approvedAt)] : []),
        ')',
      ),
    );
    for (const t of s.toolsDiff.tools) {
      parts.push(
        h(
          'div',
          { class: 'diff-item tool' },
          h('div', { class: 'diff-title' }, codicon('tools'), ' tool ', h('code', { text: t.name }), ` ${t.change}`),
          diffBlock(t.lines, `tool ${t.name}`),
        ),
      );
    }
    if (s.toolsDiff.instructions)
      parts.push(
        h(
          'div',
          { class: 'diff-item instructions' },
          h('div', { class: 'diff-title' }, codicon('book'), ' server instructions'),
          diffBlock(s.toolsDiff.instructions, 'instructions'),
        ),
      );
  }
  return parts;
}
