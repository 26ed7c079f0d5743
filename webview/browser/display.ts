// Small display pieces of a server's card: a time as read (kept current), a digest shortened for reading, a
// label/value pair of its details.
import { exactTime, relativeTime } from '../../src/text/time';
import { h } from './dom';
import type { StatusLine } from './status';

/** A time as read ("3 minutes ago"), exact on hover; kept current by `keepTimesCurrent`. */
export function when(iso: string, prefix = ''): HTMLElement {
  return h('time', {
    class: 'when',
    text: `${prefix}${relativeTime(iso, Date.now(), navigator.language)}`,
    attrs: { datetime: iso, title: exactTime(iso), 'data-prefix': prefix },
  });
}

/** Refreshes every `when` time of the page twice a minute. */
export function keepTimesCurrent(): void {
  setInterval(() => {
    for (const t of document.querySelectorAll<HTMLElement>('time.when'))
      t.textContent = `${t.dataset.prefix ?? ''}${relativeTime(t.getAttribute('datetime') ?? '', Date.now(), navigator.language)}`;
  }, 30_000);
}

/** A digest shortened for reading, the full one on hover and in what a copy takes. */
export function digest(full: string, status: StatusLine): HTMLElement {
  const short = full.length > 19 ? `${full.slice(0, 19)}…` : full;
  const code = h('code', { class: 'hash', text: short, attrs: { title: full } });
  code.addEventListener('copy', (e) => {
    e.clipboardData?.setData('text/plain', full);
    e.preventDefault();
  });
  const copy = h('vscode-button', {
    class: 'copy',
    attrs: { secondary: true, icon: 'copy', title: `Copy ${full}`, 'aria-label': 'Copy the full digest' },
  });
  copy.addEventListener(
    'click',
    () =>
      void navigator.clipboard?.writeText(full).then(
        () => status.set('Digest copied.'),
        () => status.set('The digest could not be copied.', 'error'),
      ),
  );
  return h('span', { class: 'digest-value' }, code, copy);
}

/** A term and its value in a card's details list. */
export function meta(label: string, ...value: (string | HTMLElement)[]): HTMLElement[] {
  return [h('dt', { text: label }), h('dd', {}, ...value)];
}
