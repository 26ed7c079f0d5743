// The status line at the foot of the panel: what the last action did ("Digest copied.", an approval's result),
// read out politely by screen readers.
import { h } from './dom';

export interface StatusLine {
  readonly element: HTMLElement;
  set(text: string, level?: 'info' | 'error'): void;
}

export function createStatusLine(): StatusLine {
  const element = h('div', { class: 'status', attrs: { role: 'status', 'aria-live': 'polite' } });
  return {
    element,
    set(text, level = 'info') {
      element.textContent = text;
      element.className = `status ${level}`;
    },
  };
}
