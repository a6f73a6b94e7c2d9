// One memory: its text, labels, topic key, hashes and audit timeline; archive, restore, feedback.
// Each action is the API's; a refusal (409: someone changed it since this page loaded) is shown
// and nothing is applied.

import { api, bankPath } from "../api.js";
import { badge, busy, confirmAction, field, h, json, pairs, short, table, when } from "../dom.js";
import { bankHash, outcome, reload } from "../nav.js";

export async function memoryPage(bank, id) {
  const m = await api(bankPath(bank, `/memories/${encodeURIComponent(id)}`));
  const path = bankPath(bank, `/memories/${encodeURIComponent(id)}`);
  const result = h("div", { id: "action-result", "aria-live": "polite" });
  const reason = h("input", { name: "reason", maxlength: 2000, autocomplete: "off", placeholder: "why (audited)" });

  async function act(button, verb, body, done) {
    await busy(button, async () => {
      try {
        await api(`${path}/${verb}`, { method: "POST", body });
        outcome(result, null, done);
        setTimeout(reload, 600);
      } catch (err) {
        outcome(result, err);
        if (err.status === 409) result.append(h("p", {}, "It changed since this page loaded. ",
          h("button", { type: "button", class: "small", onclick: reload }, "Reload it")));
      }
    });
  }

  const archive = h("button", { type: "button", class: "danger", onclick: async (e) => {
    const button = e.currentTarget;
    if (!(await confirmAction(`Archive this memory? It leaves the backend (recall stops returning it); the ledger keeps it and it can be restored.`, "Archive"))) return;
    await act(button, "archive", reason.value ? { reason: reason.value } : {}, "Archived.");
  } }, "Archive…");
  const restore = h("button", { type: "button", onclick: (e) => act(e.currentTarget, "restore", reason.value ? { reason: reason.value } : {}, "Restored: it is back in the backend.") }, "Restore");
  const vote = (score) => h("button", { type: "button", onclick: (e) => act(e.currentTarget, "feedback", { score, ...(reason.value ? { reason: reason.value } : {}) }, "Feedback recorded.") },
    score > 0 ? "👍 Useful" : "👎 Not useful");

  const events = m.events.slice().reverse().map((e) => h("tr", {},
    h("td", { class: "num" }, e.seq), h("td", {}, when(e.ts)), h("td", {}, badge(e.action)), h("td", {}, e.actor),
    h("td", {}, e.rule ?? "—"), h("td", { class: "text" }, e.reason ?? ""), h("td", {}, e.request_id ? short(e.request_id) : "—")));
  return [
    h("p", {}, h("a", { href: bankHash(bank, "/memories") }, `← Memories of ${bank}`)),
    h("h1", {}, "Memory ", h("code", {}, m.id)),
    h("div", { class: "card" },
      h("p", { class: "content", lang: /[\u3400-\u9fff]/.test(m.content || "") ? "zh" : "en" }, m.content || "(erased: the text is no longer kept)"),
      pairs([
        ["Status", badge(m.status)],
        ["Topic", m.topic], ["Stage", m.stage],
        ["Tags", m.tags.length ? m.tags.map((t) => h("span", { class: "badge" }, t)) : "—"],
        ["Topic key", m.topic_key ? h("code", {}, m.topic_key) : "—"],
        ["Content hash", h("code", {}, m.content_hash)],
        ["Document", m.document_id ? h("code", {}, m.document_id) : "—"],
        m.conflict_with ? ["Conflicts with", h("a", { href: bankHash(bank, `/m/${encodeURIComponent(m.conflict_with)}`) }, h("code", {}, m.conflict_with))] : null,
        ["Rule", m.rule ? `${m.rule}${m.reason ? ` — ${m.reason}` : ""}` : "—"],
        ["Written by", m.writer ? [h("code", {}, m.writer), ` through ${m.channel ?? "—"}`] : "— (before memwarden kept it)"],
        ["Feedback", `${m.feedback.score} (${m.feedback.count} votes)`],
        ["Recalled", `${m.hit_count} times`],
        ["Recorded", when(m.created_at)], ["Updated", when(m.updated_at)],
      ])),
    h("section", { class: "card" }, h("h2", {}, "Actions"),
      field("Reason (optional)", reason),
      h("div", { class: "buttons" },
        m.status === "active" ? archive : null,
        m.status === "archived" ? restore : null,
        m.status === "review" ? h("a", { class: "button", href: bankHash(bank, "/review") }, "Decide in the review queue →") : null,
        vote(1), vote(-1)),
      result),
    h("section", {}, h("h2", {}, `Audit timeline (${m.events.length})`),
      table(["Seq", "When", "Action", "Actor", "Rule", "Reason", "Request"], events, { empty: "No event." })),
    h("details", { class: "card" }, h("summary", {}, "The item as forwarded"), json(m.item)),
  ];
}

