// Banks: the list, one bank at a glance (by status, topic × stage, growth, review queue, last
// config change, health), and its memories, filtered and paged by the server.

import { ApiError, api, bankPath } from "../api.js";
import { badge, field, h, message, pager, short, show, table, when } from "../dom.js";
import { bankHash, go, hashWith } from "../nav.js";

const STATUSES = ["active", "review", "pending", "archived", "superseded", "rejected", "failed", "erased"];
const PAGE = 50;

function openBankForm(note) {
  const input = h("input", { name: "bank", required: true, autocomplete: "off", placeholder: "e.g. ops" });
  return h("form", { class: "card filters", onsubmit: (e) => { e.preventDefault(); go(bankHash(input.value.trim())); } },
    note ? h("p", { class: "muted" }, note) : null,
    field("Open a bank by its id", input),
    h("div", {}, h("button", { type: "submit", class: "primary" }, "Open")));
}

export async function banksPage() {
  const out = [h("h1", {}, "Banks")];
  let listing;
  try {
    listing = await api("/warden/v1/banks");
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 403) throw err;
    return [...out, message("info", `${err.message}. Listing every bank needs admin on every bank; open the one your key may administer.`), openBankForm()];
  }
  const rows = listing.items.map((b) => h("tr", {},
    h("td", {}, h("a", { href: bankHash(b.bank_id) }, b.bank_id)),
    h("td", { class: "num" }, b.total),
    h("td", { class: "num" }, b.by_status.active ?? 0),
    h("td", { class: "num" }, b.by_status.review ? h("a", { href: bankHash(b.bank_id, "/review") }, b.by_status.review) : 0),
    h("td", { class: "num" }, b.by_status.archived ?? 0),
    h("td", {}, when(b.last_recorded_at))));
  out.push(table(["Bank", { label: "Memories", num: true }, { label: "Active", num: true }, { label: "In review", num: true },
    { label: "Archived", num: true }, "Last recorded"], rows,
  { empty: "No bank yet: memwarden has recorded no memory. Retain one through the API and it appears here." }));
  out.push(openBankForm());
  return out;
}

function growthChart(growth) {
  const max = Math.max(1, ...growth.map((d) => d.recorded));
  const w = 600, hgt = 120, bar = w / growth.length;
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  const total = growth.length ? growth[growth.length - 1].total : 0;
  const added = growth.reduce((n, d) => n + d.recorded, 0);
  svg.setAttribute("aria-label", `${added} memories recorded over ${growth.length} days; ${total} in all`);
  growth.forEach((d, i) => {
    const rect = document.createElementNS(svg.namespaceURI, "rect");
    const height = d.recorded ? Math.max(2, (d.recorded / max) * (hgt - 4)) : 1;
    rect.setAttribute("x", String(i * bar + 1));
    rect.setAttribute("y", String(hgt - height));
    rect.setAttribute("width", String(Math.max(1, bar - 2)));
    rect.setAttribute("height", String(height));
    if (!d.recorded) rect.setAttribute("class", "zero");
    const title = document.createElementNS(svg.namespaceURI, "title");
    title.textContent = `${d.day}: ${d.recorded} recorded, ${d.total} in all`;
    rect.append(title);
    svg.append(rect);
  });
  return h("figure", { class: "card" },
    h("figcaption", {}, h("strong", {}, "Growth"), " — ", `${added} recorded in the last ${growth.length} days, ${total} in all`),
    svg,
    h("div", { class: "muted" }, growth.length ? `${growth[0].day} … ${growth[growth.length - 1].day} (UTC days)` : ""));
}

function matrixTable(bank, view) {
  const topics = [...new Set(view.matrix.map((c) => c.topic ?? ""))].sort();
  const stages = [...new Set(view.matrix.map((c) => c.stage ?? ""))].sort();
  const count = new Map(view.matrix.map((c) => [`${c.topic ?? ""}\u0000${c.stage ?? ""}`, c.count]));
  const status = view.matrix_statuses.join(",");
  const label = (x) => x || "(none)";
  const rows = topics.map((t) => h("tr", {}, h("th", { scope: "row" }, label(t)), stages.map((s) => {
    const n = count.get(`${t}\u0000${s}`);
    if (!n) return h("td", { class: "num muted" }, "·");
    const href = hashWith(bankHash(bank, "/memories"), { status, topic: t || undefined, stage: s || undefined });
    return h("td", { class: "num" }, h("a", { href, "aria-label": `${n} ${status} memories, topic ${label(t)}, stage ${label(s)}` }, n));
  })));
  return h("section", { class: "card matrix" }, h("h2", {}, `Topic × stage (${status})`),
    table(["Topic \\ stage", ...stages.map((s) => ({ label: label(s), num: true }))], rows,
      { empty: `No ${status} memory in this bank.` }));
}

function healthCard(bank) {
  const box = h("div", {}, h("p", { class: "muted" }, "Checking…"));
  api(bankPath(bank, "/reports/health")).then((r) => show(box,
    h("p", {}, badge(r.status), " ", r.reasons.length ? r.reasons.join("; ") : "nothing to report"),
    h("p", { class: "muted" }, `${r.window_days}-day window; consistency: ${r.consistency.missing_from_backend.length} active documents missing from the backend`)))
    .catch((err) => show(box, message("error", err.message)));
  return h("section", { class: "card" }, h("h2", {}, "Health"), box);
}

export async function bankPage(bank) {
  const view = await api(bankPath(bank, "/overview"), { query: { days: 30 } });
  const statusLinks = STATUSES.filter((s) => view.by_status[s]).map((s) => h("li", {},
    h("a", { href: hashWith(bankHash(bank, "/memories"), { status: s }) }, badge(s), " ", view.by_status[s])));
  const last = view.last_config_change;
  return [
    h("h1", {}, `Bank ${bank}`),
    h("div", { class: "grid" },
      h("section", { class: "card" }, h("h2", {}, "Memories"), h("div", { class: "stat" }, view.total),
        statusLinks.length ? h("ul", {}, statusLinks) : h("p", { class: "muted" }, "No memory recorded yet."),
        h("a", { href: bankHash(bank, "/memories") }, "All memories →")),
      h("section", { class: "card" }, h("h2", {}, "Review queue"), h("div", { class: "stat" }, view.review_queue),
        h("a", { href: bankHash(bank, "/review") }, view.review_queue ? "Review them →" : "Open the queue →")),
      h("section", { class: "card" }, h("h2", {}, "Last config change"),
        last ? [h("p", {}, when(last.created_at), " ", badge(last.outcome ?? "pending")),
          h("p", {}, last.change ? Object.keys(last.change).join(", ") : last.reason),
          h("a", { href: hashWith(bankHash(bank, "/config"), { snapshot: last.snapshot_id }) }, "Snapshots →")]
          : h("p", { class: "muted" }, "No config change recorded.")),
      healthCard(bank)),
    matrixTable(bank, view),
    growthChart(view.growth),
  ];
}

export async function memoriesPage(bank, query) {
  const offset = Number(query.offset || 0);
  const filters = ["status", "topic", "stage", "tag", "topic_key", "q"];
  const page = await api(bankPath(bank, "/memories"), { query: { ...pick(query, filters), limit: PAGE, offset } });
  const status = h("select", { name: "status" }, h("option", { value: "" }, "any"), STATUSES.map((s) => h("option", { value: s }, s)));
  status.value = query.status && !query.status.includes(",") ? query.status : "";
  const inputs = Object.fromEntries(["topic", "stage", "tag", "topic_key", "q"].map((n) => [n, h("input", { name: n, autocomplete: "off" })]));
  for (const [n, el] of Object.entries(inputs)) el.value = query[n] || "";
  const form = h("form", { class: "card filters", role: "search", onsubmit: (e) => {
    e.preventDefault();
    const values = Object.fromEntries(Object.entries(inputs).map(([n, el]) => [n, el.value.trim()]));
    go(hashWith(bankHash(bank, "/memories"), { status: status.value || (query.status?.includes(",") ? query.status : ""), ...values }));
  } },
  field("Status", status), field("Topic", inputs.topic), field("Stage", inputs.stage), field("Tag", inputs.tag),
  field("Topic key", inputs.topic_key), field("Text contains", inputs.q),
  h("div", {}, h("button", { type: "submit", class: "primary" }, "Filter")));
  const rows = page.items.map((m) => h("tr", {},
    h("td", { class: "text" }, h("a", { href: bankHash(bank, `/m/${encodeURIComponent(m.id)}`) }, m.content || "(erased)")),
    h("td", {}, badge(m.status)), h("td", {}, m.topic ?? "—"), h("td", {}, m.stage ?? "—"),
    h("td", {}, m.topic_key ? h("code", {}, m.topic_key) : "—"), h("td", {}, when(m.created_at)), h("td", {}, short(m.id))));
  return [
    h("h1", {}, `Memories of ${bank}`),
    h("p", {}, h("a", { href: bankHash(bank) }, `← Bank ${bank}`)),
    form,
    pager(page, (o) => go(hashWith(bankHash(bank, "/memories"), { ...pick(query, filters), offset: o }))),
    table(["Text", "Status", "Topic", "Stage", "Topic key", "Recorded", "Id"], rows, { empty: "No memory matches these filters." }),
  ];
}

function pick(query, names) {
  return Object.fromEntries(names.filter((n) => query[n]).map((n) => [n, query[n]]));
}
