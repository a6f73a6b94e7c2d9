// The dashboard's shell: the key, the hash routes, the navigation. Each page is a module of
// views/ rendering into <main> from /warden/v1 answers.

import { key, onUnauthorized } from "./api.js";
import { h, message, show } from "./dom.js";
import { bankHash, currentBank, failure, leave } from "./nav.js";
import { bankPage, banksPage, memoriesPage } from "./views/banks.js";
import { memoryPage } from "./views/memory.js";
import { reviewPage } from "./views/review.js";
import { auditPage } from "./views/audit.js";
import { explainPage } from "./views/explain.js";
import { planPage, plansPage } from "./views/plans.js";
import { configPage } from "./views/config.js";

const view = document.getElementById("view");
// Routes: #/ · #/b/{bank} · #/b/{bank}/memories?… · #/b/{bank}/m/{id} · #/b/{bank}/review ·
// #/audit?… · #/b/{bank}/explain · #/b/{bank}/plans[/{id}] · #/b/{bank}/config
const ROUTES = [
  [/^\/?$/, "banks", () => banksPage()],
  [/^\/b\/([^/]+)$/, "banks", (b) => bankPage(b)],
  [/^\/b\/([^/]+)\/memories$/, "banks", (b, q) => memoriesPage(b, q)],
  [/^\/b\/([^/]+)\/m\/([^/]+)$/, "banks", (b, id) => memoryPage(b, id)],
  [/^\/b\/([^/]+)\/review$/, "review", (b, q) => reviewPage(b, q)],
  [/^\/audit$/, "audit", (q) => auditPage(q)],
  [/^\/b\/([^/]+)\/explain$/, "explain", (b) => explainPage(b)],
  [/^\/b\/([^/]+)\/plans$/, "plans", (b) => plansPage(b)],
  [/^\/b\/([^/]+)\/plans\/([^/]+)$/, "plans", (b, id) => planPage(b, id)],
  [/^\/b\/([^/]+)\/config$/, "config", (b, q) => configPage(b, q)],
  [/^\/(review|explain|plans|config)$/, null, (page) => needBank(page)],
];

function needBank(page) {
  const bank = currentBank.get();
  if (bank) {
    location.replace(bankHash(bank, `/${page}`));
    return null;
  }
  return [h("h1", {}, page[0].toUpperCase() + page.slice(1)),
    message("info", "Choose a bank first: ", h("a", { href: "#/" }, "the banks"), ".")];
}

function renderChrome(page) {
  const bank = currentBank.get();
  document.getElementById("bank-label").textContent = bank ? `bank: ${bank}` : "";
  for (const a of document.querySelectorAll("#nav a")) {
    const name = a.dataset.page;
    if (name !== "banks" && name !== "audit") a.href = bank ? bankHash(bank, `/${name}`) : `#/${name}`;
    if (name === "audit") a.href = bank ? `#/audit?bank=${encodeURIComponent(bank)}` : "#/audit";
    if (page !== undefined) {
      if (name === page) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
  }
  // Only a memwarden key's public id (mwk_ and 12 hex digits) is shown: never what else was typed.
  const k = key.get();
  const id = /^(mwk_[0-9a-f]{12})_./.exec(k);
  document.getElementById("key-button").textContent = !k ? "API key" : id ? `Key ${id[1]}` : "Key (not a memwarden key)";
}

async function route() {
  leave();
  const raw = location.hash.replace(/^#/, "") || "/";
  const [path, qs = ""] = raw.split("?");
  const query = Object.fromEntries(new URLSearchParams(qs));
  for (const [pattern, page, render] of ROUTES) {
    const found = path.match(pattern);
    if (!found) continue;
    let args;
    try {
      args = found.slice(1).map(decodeURIComponent);
    } catch {  // a broken percent-escape (a hand-edited link): said, not left showing the previous page
      break;
    }
    if (path.startsWith("/b/")) currentBank.set(args[0]);
    renderChrome(page ?? "");
    show(view, h("p", { class: "muted" }, "Loading…"));
    try {
      const content = await render(...args, query);
      if (content !== null) show(view, content);
    } catch (err) {
      show(view, failure(err));
    }
    const heading = view.querySelector("h1");
    document.title = heading ? `${heading.textContent} · memwarden` : "memwarden";
    return;
  }
  renderChrome("");
  show(view, h("h1", {}, "Not found"), message("error", `No page ${path}.`), h("a", { href: "#/" }, "Back to the banks"));
}

function askKey(reason) {
  const dialog = document.getElementById("key-dialog");
  if (dialog.open) return;
  document.getElementById("key-why").textContent = reason
    || "Kept in this tab only (sessionStorage) and sent as Authorization: Bearer to /warden/v1.";
  document.getElementById("key-input").value = "";
  dialog.showModal();
}

function setup() {
  const dialog = document.getElementById("key-dialog");
  dialog.addEventListener("close", () => {
    if (dialog.returnValue === "save") key.set(document.getElementById("key-input").value.trim());
    else if (dialog.returnValue === "forget") key.set("");
    else return;
    route();
  });
  document.getElementById("key-button").addEventListener("click", () => askKey());
  onUnauthorized((err) => askKey(`${err.message} The key is kept in this tab only and sent as Authorization: Bearer.`));
  window.addEventListener("hashchange", () => { route(); view.focus({ preventScroll: true }); });
  route();
}

setup();
