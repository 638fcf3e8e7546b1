// A tiny DOM builder. Text always goes in through textContent (text nodes),
// never innerHTML, so names and addresses from the API cannot inject markup.

/** A child: a node, text, or nothing (skipped, so `cond && node` works). */
export type Child = Node | string | number | null | undefined | false;

/** Attribute values: true sets an empty boolean attribute, false/null/undefined skip it. */
export type Attrs = Record<string, string | number | boolean | null | undefined>;

/**
 * h builds an element: `h("a", { href: "/portal/" }, "Optimizations")`.
 * Attributes named `on…` are refused: handlers are attached with
 * addEventListener, which the CSP allows while inline handlers are not.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (value === false || value === null || value === undefined) continue;
      if (/^on/i.test(name) || name === "style") throw new Error(`h: attribute ${name} is not allowed (CSP)`);
      el.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(el, ...children);
  return el;
}

/** append adds children (text as text nodes) to parent. */
export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    parent.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
}

/** replace empties parent and fills it with children. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, ...children);
}

/**
 * tableWrap puts a table in a labelled, focusable region that scrolls
 * sideways on narrow screens, so the page itself never scrolls sideways
 * and keyboard users can scroll the table.
 */
export function tableWrap(label: string, table: HTMLTableElement): HTMLDivElement {
  return h("div", { class: "table-wrap", tabindex: 0, role: "region", "aria-label": label }, table);
}

/** th builds a header cell with its scope, as screen readers need. */
export function th(text: string, scope: "col" | "row" = "col", attrs: Attrs = {}): HTMLTableCellElement {
  return h("th", { scope, ...attrs }, text);
}

/** td builds a data cell carrying data-col, which the browser tests read. */
export function td(col: string, ...children: Child[]): HTMLTableCellElement {
  return h("td", { "data-col": col }, ...children);
}
