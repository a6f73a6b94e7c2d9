// Plans: the cleanup report → a plan (a dry run recording each target's state) → apply by typing
// the plan's phrase → what was applied, what failed, what was not attempted. A wrong phrase, an
// expired plan or a target changed since (stale) is the API's refusal, shown; nothing is applied.

import { api, bankPath } from "../api.js";
import { badge, busy, field, h, message, short, table, when } from "../dom.js";
import { bankHash, go, outcome } from "../nav.js";

const planHash = (bank, id) => bankHash(bank, `/plans/${encodeURIComponent(id)}`);
const memoryLink = (bank, id) => h("a", { href: bankHash(bank, `/m/${encodeURIComponent(id)}`) }, short(id));

export async function plansPage(bank) {
  const [report, plans] = await Promise.all([api(bankPath(bank, "/reports/cleanup")), api(bankPath(bank, "/plans"))]);
  const result = h("div", { "aria-live": "polite" });
  const plannable = report.candidates.filter((c) => c.plannable).length;
  const make = h("button", { type: "button", class: "primary", disabled: !plannable, onclick: async (e) => {
    await busy(e.currentTarget, async () => {
      try {
        const plan = await api(bankPath(bank, "/plans"), { method: "POST", body: { from: "cleanup" } });
        go(planHash(bank, plan.id));
      } catch (err) { outcome(result, err); }
    });
  } }, `Make a plan of the ${plannable} plannable candidates`);
  const candidates = report.candidates.map((c) => h("tr", {},
    h("td", { class: "text" }, c.content), h("td", {}, c.kinds.map((k) => badge(k))),
    h("td", { class: "text" }, c.reasons.join("; ")), h("td", {}, c.plannable ? "yes" : c.note ?? "no"), h("td", {}, memoryLink(bank, c.id))));
  const rows = plans.items.map((p) => h("tr", {},
    h("td", {}, h("a", { href: planHash(bank, p.id) }, h("code", {}, p.id))), h("td", {}, badge(p.status)),
    h("td", { class: "num" }, p.operations), h("td", { class: "text" }, p.reason ?? ""), h("td", {}, when(p.created_at)),
    h("td", {}, when(p.expires_at))));
  return [
    h("h1", {}, `Plans of ${bank}`),
    h("section", { class: "card" }, h("h2", {}, "Cleanup report"),
      h("p", {}, `${report.candidates.length} candidates among ${report.active} active memories (a dry run: nothing changes until a plan is applied).`),
      table(["Text", "Kinds", "Why", "Plannable", "Memory"], candidates, { empty: "Nothing to clean up." }),
      h("div", { class: "buttons" }, make), result),
    h("section", {}, h("h2", {}, "Plans"),
      table(["Plan", "Status", { label: "Operations", num: true }, "Reason", "Made", "Expires"], rows, { empty: "No plan yet." })),
  ];
}

function resultView(bank, plan) {
  const r = plan.result;
  if (!r) return null;
  if (plan.status === "stale") {
    return message("error", `Stale: ${r.changed.length} targets changed since the plan was made; nothing was applied. Make a new plan.`);
  }
  const line = (o) => h("li", {}, `${o.op} `, memoryLink(bank, o.memory_id));
  return h("section", { class: "card", id: "plan-result" }, h("h2", {}, "Result"),
    h("h3", {}, `Applied (${r.applied.length})`), r.applied.length ? h("ul", {}, r.applied.map(line)) : h("p", { class: "muted" }, "none"),
    h("h3", {}, "Failed"), r.failed ? h("p", {}, line(r.failed), ` — ${r.failed.status}: ${typeof r.failed.detail === "string" ? r.failed.detail : JSON.stringify(r.failed.detail)}`) : h("p", { class: "muted" }, "none"),
    h("h3", {}, `Not attempted (${r.not_attempted.length})`), r.not_attempted.length ? h("ul", {}, r.not_attempted.map(line)) : h("p", { class: "muted" }, "none"));
}

export async function planPage(bank, id) {
  const plan = await api(bankPath(bank, `/plans/${encodeURIComponent(id)}`));
  const result = h("div", { id: "apply-result", "aria-live": "polite" });
  const expired = new Date(plan.expires_at) < new Date();
  const phrase = h("input", { name: "phrase", autocomplete: "off", spellcheck: "false", lang: "zh" });
  const apply = h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    await busy(e.submitter || e.currentTarget, async () => {
      try {
        const done = await api(bankPath(bank, `/plans/${encodeURIComponent(id)}/apply`), { method: "POST", body: { phrase: phrase.value } });
        result.replaceChildren(message("ok", `Plan ${done.status}.`), resultView(bank, done));
        form.remove();
        statusCell.replaceChildren(badge(done.status));
      } catch (err) {
        if (err.status === 502 && err.body && err.body.result) {
          result.replaceChildren(message("error", "Partially applied: an operation failed; the rest were not attempted."), resultView(bank, err.body));
          statusCell.replaceChildren(badge(err.body.status));
        } else {
          const stale = err.detail && err.detail.message;
          outcome(result, stale ? new Error(`${stale}. Nothing was applied; make a new plan.`) : err);
        }
      }
    });
  } },
  h("h2", {}, "Apply"),
  h("p", {}, "Type the plan's confirmation phrase exactly: ", h("code", { lang: "zh" }, plan.phrase)),
  field("Confirmation phrase", phrase),
  h("div", { class: "buttons" }, h("button", { type: "submit", class: "danger" }, "Apply the plan")));
  const form = apply;
  const statusCell = h("span", {}, badge(plan.status));
  const ops = plan.operations.map((o) => h("tr", {},
    h("td", {}, badge(o.op)), h("td", {}, memoryLink(bank, o.memory_id)), h("td", { class: "text" }, o.content),
    h("td", {}, o.expected.status), h("td", { class: "text" }, o.effect)));
  return [
    h("p", {}, h("a", { href: bankHash(bank, "/plans") }, `← Plans of ${bank}`)),
    h("h1", {}, "Plan ", h("code", {}, plan.id)),
    h("div", { class: "card" }, h("p", {}, "Status: ", statusCell, " · made ", when(plan.created_at), " · expires ", when(plan.expires_at),
      plan.applied_at ? [" · finished ", when(plan.applied_at)] : null), plan.reason ? h("p", {}, plan.reason) : null),
    h("section", {}, h("h2", {}, `Dry run: ${plan.operations.length} operations`),
      table(["Operation", "Memory", "Text", "Now", "What it will do"], ops)),
    plan.status === "planned" ? [expired ? message("info", "This plan has expired: applying it will be refused.") : null, apply] : null,
    result,
    resultView(bank, plan),
  ];
}
