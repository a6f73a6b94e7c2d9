// Explain: one recall, white-box — every candidate with its ranks and scores, returned or
// excluded and why. The form is a recall's body: the query, the tag filter and its mode, the
// budget, the token limit, the fact types.

import { api, bankPath } from "../api.js";
import { badge, busy, field, h, json, pairs, short, table } from "../dom.js";
import { failure } from "../nav.js";

const MODES = ["any", "all", "any_strict", "all_strict", "exact"];
const TYPES = ["world", "experience", "observation"];
const num = (x, digits = 4) => (x === null || x === undefined ? "—" : Number(x).toFixed(digits));

function arm(a) {
  return a ? `#${a.rank ?? "—"} · ${num(a.score)}` : "—";
}

function account(bank, r) {
  const rows = r.candidates.map((c, i) => h("tr", { class: c.outcome === "excluded" ? "excluded" : "" },
    h("td", { class: "num" }, c.rank ?? i + 1), h("td", {}, badge(c.outcome)), h("td", { class: "text" }, c.text),
    h("td", { class: "num" }, arm(c.semantic)), h("td", { class: "num" }, arm(c.keyword)), h("td", { class: "num" }, num(c.fused)),
    h("td", { class: "text" }, c.reason ?? ""), h("td", {}, (c.tags || []).join(", ")), h("td", {}, short(c.document_id))));
  const excluded = Object.entries(r.summary.excluded);
  return [
    h("section", { class: "card" }, h("h2", {}, "Summary"),
      pairs([
        ["Candidates", r.summary.candidates], ["Returned", r.summary.returned],
        ["Excluded", excluded.length ? excluded.map(([k, n]) => `${k}: ${n}`).join("; ") : "none"],
        ["Backend", r.backend], ["Embedder", r.embedder], r.fts_query ? ["Full-text query", h("code", {}, r.fts_query)] : null,
        r.arms ? ["Retrievers", Object.entries(r.arms).map(([k, n]) => `${k}: ${n}`).join(", ")] : null,
        r.fusion ? ["Fusion", r.fusion] : null, r.tokens_used !== undefined ? ["Tokens", `${r.tokens_used} of ${r.max_tokens}`] : null,
        r.note ? ["Note", r.note] : null,
        ["Tag filter", JSON.stringify(r.tag_filter.expanded)],
      ])),
    table([{ label: "Rank", num: true }, "Outcome", "Text", { label: "Semantic", num: true }, { label: "Keyword", num: true },
      { label: "Fused", num: true }, "Why", "Tags", "Document"], rows, { empty: "No candidate: nothing in the bank matched." }),
    r.backend_trace ? h("details", { class: "card" }, h("summary", {}, "The backend's trace"), json(r.backend_trace)) : null,
  ];
}

export async function explainPage(bank) {
  const query = h("textarea", { name: "query", rows: 2, required: true, placeholder: "What would an agent ask? 例如：默认模型是什么？" });
  const tags = h("input", { name: "tags", autocomplete: "off", placeholder: "topic:infra, user:alice" });
  const mode = h("select", { name: "tags_match" }, MODES.map((m) => h("option", { value: m }, m)));
  const budget = h("select", { name: "budget" }, ["low", "mid", "high"].map((b) => h("option", { value: b }, b)));
  budget.value = "mid";
  const maxTokens = h("input", { name: "max_tokens", type: "number", min: 1, value: "4096" });
  const types = TYPES.map((t) => h("input", { type: "checkbox", value: t }));
  const out = h("div", { id: "explain-result", "aria-live": "polite" });
  const form = h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    const body = { query: query.value, tags_match: mode.value, budget: budget.value, max_tokens: Number(maxTokens.value) || 4096 };
    const chosen = types.filter((t) => t.checked).map((t) => t.value);
    if (chosen.length) body.types = chosen;
    const list = tags.value.split(",").map((t) => t.trim()).filter(Boolean);
    if (list.length) body.tags = list;
    await busy(e.submitter || form, async () => {
      out.replaceChildren(h("p", { class: "muted" }, "Recalling…"));
      try { out.replaceChildren(...account(bank, await api(bankPath(bank, "/explain"), { method: "POST", body }))); }
      catch (err) { out.replaceChildren(failure(err)); }
    });
  } },
  field("Query", query),
  h("div", { class: "filters" }, field("Tags (comma-separated)", tags), field("Tag match", mode), field("Budget", budget),
    field("Max tokens", maxTokens),
    h("fieldset", {}, h("legend", {}, "Fact types (none: the default)"), types.map((t) => h("label", {}, t, " ", t.value)))),
  h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary" }, "Explain")));
  return [h("h1", {}, `Explain a recall in ${bank}`), form, out];
}
