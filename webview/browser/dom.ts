// The only way the panel makes DOM: elements with text content, attributes and listeners. There is no innerHTML,
// no insertAdjacentHTML and no inline handler anywhere in the webview: untrusted strings are only ever text.

export type Child = Node | string | null | undefined | false;

export interface Props {
  class?: string;
  text?: string;
  title?: string;
  attrs?: Record<string, string | boolean | undefined>;
  on?: Record<string, (e: Event) => void>;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props, ...children: Child[]): HTMLElementTagNameMap[K];
export function h(tag: string, props?: Props, ...children: Child[]): HTMLElement;
export function h(tag: string, props: Props = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  if (props.title !== undefined) el.title = props.title;
  for (const [k, v] of Object.entries(props.attrs ?? {})) {
    if (/^on/i.test(k)) throw new Error(`refusing to set the event attribute ${k}`);
    if (v === true) el.setAttribute(k, '');
    else if (typeof v === 'string') el.setAttribute(k, v);
  }
  for (const [type, f] of Object.entries(props.on ?? {})) el.addEventListener(type, f);
  if (props.text !== undefined) el.textContent = props.text;
  append(el, ...children);
  return el;
}

export function append(el: Element, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
}

/** A codicon from the page's codicon.css (cheaper than a vscode-icon element, for rows rendered in bulk). */
export function codicon(name: string, label?: string): HTMLElement {
  const el = h('span', { class: `codicon codicon-${name}` });
  if (label) {
    el.setAttribute('role', 'img');
    el.setAttribute('aria-label', label);
  } else el.setAttribute('aria-hidden', 'true');
  return el;
}

export function icon(name: string, label?: string): HTMLElement {
  const el = h('vscode-icon', { attrs: { name, ...(label ? { label } : {}) } });
  if (!label) el.setAttribute('aria-hidden', 'true');
  return el;
}
