// The review queue: each held item beside the memory it conflicts with. One item: approve or
// reject at once (reject asks first). Many: a plan of approvals or rejections, applied on the
// plan's page by typing its phrase — the API's bulk path, dry run first.

import { api, bankPath } from "../api.js";
import { badge, busy, confirmAction, h, message, pager, short, when } from "../dom.js";
import { bankHash, go, hashWith, outcome, reload } from "../nav.js";

const PAGE = 25;

function memoryBox(title, m, bank) {
  if (!m) return h("div", {}, h("strong", {}, title), h("p", { class: "muted" }, "(no longer in the ledger)"));
  return h("div", {},
    h("strong", {}, title, " "), badge(m.status),
    h("p", { class: "content" }, m.content),
    h("p", { class: "muted" }, m.topic_key ? h("code", {}, m.topic_key) : "", " · ", when(m.created_at), " · ",
      h("a", { href: bankHash(bank, `/m/${encodeURIComponent(m.id)}`) }, short(m.id))));
}

// Held because it holds instructions aimed at the agent (not a topic-key conflict): why, by which rules.
const quarantined = (m) => typeof m.rule === "string" && m.rule.startsWith("injection.");

function whyHeld(m) {
  return h("div", {}, h("strong", {}, "Quarantined "), badge("injection"),
    h("p", {}, m.reason || ""), h("p", { class: "muted" }, h("code", {}, m.rule)));
}

export async function reviewPage(bank, query) {
  const offset = Number(query.offset || 0);
  const page = await api(bankPath(bank, "/review"), { query: { limit: PAGE, offset } });
  if (!page.items.length && offset > 0 && page.total > 0) {  // the page's last item decided: the last page there is
    location.replace(hashWith(bankHash(bank, "/review"), { offset: Math.floor((page.total - 1) / PAGE) * PAGE || undefined }));
    return null;
  }
  const result = h("div", { "aria-live": "polite" });
  const checks = [];

  async function decide(button, id, verb) {
    if (verb === "reject" && !(await confirmAction("Reject this held item? It is dropped (kept in the ledger as rejected) and never reaches the backend.", "Reject"))) return;
    await busy(button, async () => {
      try {
        const r = await api(bankPath(bank, `/review/${encodeURIComponent(id)}/${verb}`), { method: "POST" });
        outcome(result, null, `${verb === "approve" ? "Approved" : "Rejected"}: ${r.status}.`);
        setTimeout(reload, 600);
      } catch (err) {
        outcome(result, err);
      }
    });
  }

  async function planMany(button, op) {
    const ids = checks.filter((c) => c.checked).map((c) => c.value);
    if (!ids.length) { outcome(result, new Error("Select the items first.")); return; }
    await busy(button, async () => {
      try {
        const plan = await api(bankPath(bank, "/plans"), { method: "POST",
          body: { operations: ids.map((memory_id) => ({ op, memory_id })), reason: `review: ${op} ${ids.length} from the dashboard` } });
        go(bankHash(bank, `/plans/${encodeURIComponent(plan.id)}`));
      } catch (err) {
        outcome(result, err);
      }
    });
  }

  const items = page.items.map(({ held, conflicts_with: other }) => {
    const check = h("input", { type: "checkbox", value: held.id, "aria-label": `Select ${held.content.slice(0, 40)}` });
    checks.push(check);
    return h("article", { class: "card review-item" },
      h("div", { class: "buttons" }, h("label", {}, check, " select"),
        h("button", { type: "button", class: "primary", onclick: (e) => decide(e.currentTarget, held.id, "approve") }, "Approve"),
        h("button", { type: "button", class: "danger", onclick: (e) => decide(e.currentTarget, held.id, "reject") }, "Reject…")),
      h("div", { class: "side" }, memoryBox("Held", held, bank),
        quarantined(held) ? whyHeld(held) : memoryBox("Conflicts with", other, bank)));
  });
  const all = h("input", { type: "checkbox", "aria-label": "Select every item on this page",
    onchange: (e) => checks.forEach((c) => { c.checked = e.currentTarget.checked; }) });
  return [
    h("h1", {}, `Review queue of ${bank}`),
    page.total ? h("p", {}, `${page.total} held: an item that conflicts with the memory holding its topic key (approving supersedes that memory),`
      + " or one quarantined for instructions aimed at the agent (approving delivers it as it is).")
      : message("ok", "The review queue is empty."),
    page.total ? h("div", { class: "card buttons" }, h("label", {}, all, " select all on this page"),
      h("button", { type: "button", onclick: (e) => planMany(e.currentTarget, "approve") }, "Plan: approve selected…"),
      h("button", { type: "button", onclick: (e) => planMany(e.currentTarget, "reject") }, "Plan: reject selected…")) : null,
    result,
    page.total > PAGE ? pager(page, (o) => go(hashWith(bankHash(bank, "/review"), { offset: o }))) : null,
    items,
  ];
}
