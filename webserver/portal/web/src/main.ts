// The portal's entry point: a router on location.pathname over the pages,
// the signed-in layout (header, nav, main) and the sign-in gate. In-app
// links go through the history API, so pages change without reloading.

import { call, isAbort, whenUnauthorized, ApiError } from "./api";
import { h, replace } from "./dom";
import { renderKeys } from "./pages/keys";
import { renderList } from "./pages/list";
import { renderOptimization } from "./pages/optimization";
import { noLongerAccepted, renderSignIn } from "./pages/signin";
import { clearKey, storedKey } from "./session";
import type { Me } from "./types";
import { explain, type PageContext } from "./ui";

const root = "/portal/";

/** me is the signed-in company and scopes, fetched once per key. */
let me: Me | null = null;
/** current aborts when the page is left: its polling and requests stop. */
let current = new AbortController();
/** moveFocus is set by in-app navigation, so the new page's heading takes focus. */
let moveFocus = false;

interface Route {
  title: string;
  nav?: string;
  render: (ctx: PageContext) => void;
}

/** route maps a path to its page; unknown paths get the not-found page. */
function route(path: string): Route {
  if (path === root) return { title: "Optimizations", nav: root, render: renderList };
  if (path === root + "api-keys") return { title: "API keys", nav: root + "api-keys", render: renderKeys };
  const m = /^\/portal\/optimizations\/([^/]+)$/.exec(path);
  if (m) {
    let id: string;
    try {
      id = decodeURIComponent(m[1]!);
    } catch {
      return notFound;
    }
    return { title: "Optimization", nav: root, render: (ctx) => renderOptimization(ctx, id) };
  }
  return notFound;
}

const notFound: Route = {
  title: "Page not found",
  render: ({ main }) => {
    main.append(
      h("h1", { tabindex: -1, id: "not-found" }, "Page not found"),
      h("p", null, "There is no portal page at ", h("code", null, location.pathname), "."),
      h("p", null, h("a", { href: root }, "Go to the optimizations")),
    );
  },
};

function app(): HTMLElement {
  let el = document.getElementById("app");
  if (!el) {
    el = h("div", { id: "app" });
    document.body.append(el);
  }
  return el;
}

/** fresh aborts the current page and gives the next one its signal. */
function fresh(): AbortSignal {
  current.abort();
  current = new AbortController();
  return current.signal;
}

function skipLink(): HTMLElement {
  return h("a", { class: "skip-link", href: "#main" }, "Skip to content");
}

function newMain(): HTMLElement {
  return h("main", { id: "main", tabindex: -1 });
}

/** showSignIn replaces everything with the sign-in form. */
function showSignIn(message?: string): void {
  const signal = fresh();
  me = null;
  document.title = "Sign in · routeopt";
  const main = newMain();
  replace(app(), skipLink(), h("header", { class: "site-header" }, h("span", { class: "brand" }, "routeopt")), main);
  renderSignIn(
    main,
    signal,
    (_key, who) => {
      me = who;
      moveFocus = true;
      void render();
    },
    message,
  );
}

/** signOut forgets the key and shows the sign-in form. */
function signOut(message?: string): void {
  clearKey();
  showSignIn(message);
}

/** render draws the page for location.pathname, signing in first when needed. */
async function render(): Promise<void> {
  const key = storedKey();
  if (!key) {
    showSignIn();
    return;
  }
  const signal = fresh();
  const focus = moveFocus;
  moveFocus = false;
  if (!me) {
    const main = newMain();
    replace(app(), skipLink(), h("header", { class: "site-header" }, h("span", { class: "brand" }, "routeopt")), main);
    main.append(h("p", { class: "loading", role: "status" }, "Signing in…"));
    try {
      me = await call<Me>("GET", "/v1/me", { signal });
    } catch (err) {
      if (isAbort(err) || signal.aborted) return;
      if (err instanceof ApiError && err.status === 401) return; // whenUnauthorized showed the form
      const retry = h("button", { type: "button", class: "button primary" }, "Try again");
      retry.addEventListener("click", () => void render());
      replace(main, h("h1", null, "The portal could not start"), h("p", { id: "page-error", class: "error-box", role: "alert" }, explain(err)), retry);
      return;
    }
    if (signal.aborted) return;
  }
  const r = route(location.pathname);
  document.title = r.title + " · routeopt";
  const main = newMain();
  replace(app(), skipLink(), header(me, r.nav), main);
  r.render({ main, signal, me, key, navigate, signOut });
  if (focus) main.querySelector<HTMLElement>("h1")?.focus();
}

function header(who: Me, active?: string): HTMLElement {
  const link = (href: string, text: string) => h("a", { href, "aria-current": active === href ? "page" : null }, text);
  const out = h("button", { type: "button", id: "sign-out", class: "button secondary small" }, "Sign out");
  out.addEventListener("click", () => signOut());
  return h(
    "header",
    { class: "site-header" },
    h("a", { class: "brand", href: root }, "routeopt"),
    h("span", { id: "company-name", class: "company" }, who.company.name || who.company.id),
    h("nav", { "aria-label": "Portal" }, h("ul", null, h("li", null, link(root, "Optimizations")), h("li", null, link(root + "api-keys", "API keys")))),
    out,
  );
}

/** navigate shows another portal page without a reload. */
function navigate(path: string): void {
  history.pushState(null, "", path);
  moveFocus = true;
  void render();
}

/** onClick turns same-origin links to portal pages into in-app navigation. */
function onClick(ev: MouseEvent): void {
  if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  const a = (ev.target as Element | null)?.closest?.("a");
  if (!a || a.target || a.hasAttribute("download")) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith(root)) return;
  if (url.pathname === location.pathname && url.search === location.search && url.hash) return; // in-page anchor
  ev.preventDefault();
  navigate(url.pathname + url.search);
}

whenUnauthorized(() => showSignIn(noLongerAccepted));
window.addEventListener("popstate", () => void render());
document.addEventListener("click", onClick);
void render();
