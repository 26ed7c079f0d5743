// A virtualised list of fixed-height rows: only the rows in view (plus a margin) exist in the DOM, recycled as the
// list scrolls, so ten thousand log events scroll as smoothly as ten. Rows are positioned with CSSOM transforms
// (never a style attribute in markup, which the panel's CSP would refuse). Keyboard: arrows, Page Up/Down,
// Home/End move the selection; Enter opens it.

/** What the list shows: items are made on demand, so a long list costs only the rows in view. */
export interface ListSource<T> {
  length: number;
  at(i: number): T;
  /** The position of the item with this id, or -1. */
  indexOf(id: number): number;
}

export interface VirtualListOptions<T> {
  viewport: HTMLElement;
  rowHeight: number;
  /** Fills a recycled row element with an item's text. Called only for rows in view. */
  render(row: HTMLElement, item: T, index: number, selected: boolean): void;
  createRow(): HTMLElement;
  onSelect(item: T, index: number, open: boolean): void;
  onScroll?(scrollTop: number): void;
}

export class VirtualList<T extends { id: number }> {
  private items: ListSource<T> = { length: 0, at: () => undefined as unknown as T, indexOf: () => -1 };
  private readonly spacer: HTMLElement;
  private pool: HTMLElement[] = [];
  private frame = 0;
  selectedId: number | undefined;

  constructor(private readonly o: VirtualListOptions<T>) {
    this.spacer = document.createElement('div');
    this.spacer.className = 'vlist-spacer';
    o.viewport.append(this.spacer);
    o.viewport.addEventListener(
      'scroll',
      () => {
        this.schedule();
        o.onScroll?.(o.viewport.scrollTop);
      },
      { passive: true },
    );
    o.viewport.addEventListener('click', (e) => {
      const row = (e.target as HTMLElement).closest<HTMLElement>('.vlist-row');
      if (!row || row.dataset.index === undefined) return;
      const i = Number(row.dataset.index);
      if (i < this.items.length) this.select(i, true);
    });
    o.viewport.addEventListener('keydown', (e) => this.onKey(e));
    new ResizeObserver(() => this.schedule()).observe(o.viewport);
  }

  get length(): number {
    return this.items.length;
  }

  setItems(items: ListSource<T>): void {
    this.items = items;
    this.spacer.style.height = `${items.length * this.o.rowHeight}px`;
    this.renderNow();
  }

  indexOfSelected(): number {
    return this.selectedId === undefined ? -1 : this.items.indexOf(this.selectedId);
  }

  select(i: number, open: boolean): void {
    if (i < 0 || i >= this.items.length) return;
    const item = this.items.at(i);
    this.selectedId = item.id;
    this.reveal(i);
    this.renderNow();
    this.o.onSelect(item, i, open);
  }

  reveal(i: number): void {
    const v = this.o.viewport;
    const top = i * this.o.rowHeight;
    if (top < v.scrollTop) v.scrollTop = top;
    else if (top + this.o.rowHeight > v.scrollTop + v.clientHeight) v.scrollTop = top + this.o.rowHeight - v.clientHeight;
  }

  scrollTo(top: number): void {
    this.o.viewport.scrollTop = top;
    this.renderNow();
  }

  private onKey(e: KeyboardEvent): void {
    const page = Math.max(1, Math.floor(this.o.viewport.clientHeight / this.o.rowHeight) - 1);
    const cur = this.indexOfSelected();
    let next: number | undefined;
    switch (e.key) {
      case 'ArrowDown':
        next = cur + 1;
        break;
      case 'ArrowUp':
        next = cur < 0 ? 0 : cur - 1;
        break;
      case 'PageDown':
        next = cur + page;
        break;
      case 'PageUp':
        next = cur - page;
        break;
      case 'Home':
        next = 0;
        break;
      case 'End':
        next = this.items.length - 1;
        break;
      case 'Enter':
        if (cur >= 0) {
          this.select(cur, true);
          e.preventDefault();
        }
        return;
      default:
        return;
    }
    e.preventDefault();
    if (this.items.length) this.select(Math.max(0, Math.min(this.items.length - 1, next)), false);
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.renderNow();
    });
  }

  renderNow(): void {
    const v = this.o.viewport;
    const h = this.o.rowHeight;
    const height = v.clientHeight || 600;
    const overscan = 8;
    const first = Math.max(0, Math.floor(v.scrollTop / h) - overscan);
    const count = Math.min(this.items.length - first, Math.ceil(height / h) + overscan * 2);
    while (this.pool.length < count) {
      const row = this.o.createRow();
      row.classList.add('vlist-row');
      row.setAttribute('role', 'row');
      this.pool.push(row);
      v.append(row);
    }
    for (let k = 0; k < this.pool.length; k++) {
      const row = this.pool[k];
      if (k >= count) {
        row.hidden = true;
        continue;
      }
      const i = first + k;
      const item = this.items.at(i);
      row.hidden = false;
      row.dataset.index = String(i);
      row.style.transform = `translateY(${i * h}px)`;
      const selected = item.id === this.selectedId;
      row.classList.toggle('selected', selected);
      row.setAttribute('aria-selected', String(selected));
      this.o.render(row, item, i, selected);
    }
  }
}
