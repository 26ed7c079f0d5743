// The top of the panel: the header bar (the workspace's folders, when the model was made) and the warning banners
// under it, each with the files it names.
import type { PanelModel } from '../common/protocol';
import { codicon, h, icon } from './dom';

export interface Header {
  readonly bar: HTMLElement;
  readonly banners: HTMLElement;
  render(model: PanelModel): void;
}

export function createHeader(): Header {
  const updated = h('span', { class: 'updated' });
  const folders = h('span', { class: 'folders' });
  const banners = h('div', { class: 'banners', attrs: { role: 'region', 'aria-label': 'Warnings' } });
  const bar = h(
    'header',
    { class: 'bar' },
    icon('shield'),
    h('h1', { text: 'MCP Gate' }),
    h('span', { class: 'subtitle', text: 'trust panel' }),
    folders,
    updated,
  );
  return {
    bar,
    banners,
    render(model) {
      folders.textContent = model.folders.map((f) => f.name).join(', ');
      const t = /T(\d\d:\d\d:\d\d)/.exec(model.generatedAt);
      updated.textContent = t ? `updated ${t[1]} UTC` : '';
      banners.replaceChildren(
        ...model.banners.map((b) =>
          h(
            'div',
            { class: `banner ${b.level}`, attrs: { role: b.level === 'error' ? 'alert' : 'note' } },
            codicon(b.level === 'error' ? 'error' : b.level === 'warning' ? 'warning' : 'info'),
            ' ',
            h('span', { text: b.text }),
            b.files?.length
              ? h('div', { class: 'files' }, 'files: ', ...b.files.flatMap((f, i) => [i ? ', ' : '', h('code', { text: f })]))
              : null,
          ),
        ),
      );
    },
  };
}
