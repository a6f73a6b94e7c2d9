// Config: the bank's snapshots (each guarded change: what changed, how its verification ended),
// and a rollback — its preview first (what it would restore), then, confirmed, the rollback.

import { api, bankPath } from "../api.js";
import { badge, busy, confirmAction, h, json, message, pairs, short, table, when } from "../dom.js";
import { bankHash, hashWith, outcome } from "../nav.js";

function changeText(change) {
  if (!change) return "—";
  return Object.entries(change).map(([k, v]) => `${k} = ${typeof v === "string" ? v : JSON.stringify(v)}`).join("; ");
}

function previewView(plan) {
  return pairs([
    ["Overrides restored", plan.restore_overrides.length ? plan.restore_overrides.join(", ") : "none"],
    ["Memories missing now", plan.missing_memories],
    ["Documents missing now", plan.missing_documents],
    ["Memories to restore", plan.memories_to_restore],
    ["Unrestorable", plan.unrestorable.length ? plan.unrestorable.join(", ") : "none"],
    ["Counts now", JSON.stringify(plan.current_counts)],
  ]);
}

function snapshotView(bank, snap) {
  const box = h("div", { id: "rollback", "aria-live": "polite" });
  const path = bankPath(bank, `/snapshots/${encodeURIComponent(snap.id)}/rollback`);
  const preview = h("button", { type: "button", class: "primary", onclick: async (e) => {
    await busy(e.currentTarget, async () => {
      try {
        const got = await api(path, { method: "POST", query: { preview: "true" } });
        const doIt = h("button", { type: "button", class: "danger", onclick: async (ev) => {
          const button = ev.currentTarget;  // gone once the handler awaits
          if (!(await confirmAction(`Roll bank ${bank}'s config back to snapshot ${snap.id}? Its overrides are restored and missing memories re-created from the ledger.`, "Roll back"))) return;
          await busy(button, async () => {
            try {
              const done = await api(path, { method: "POST" });
              const r = done.result;
              box.replaceChildren(message("ok", `Rolled back: ${r.overrides_restored.length} overrides restored, ${r.memories_restored} memories restored${r.complete ? "" : " (incomplete)"}.`), json(r));
            } catch (err) {
              outcome(box, err);
              if (err.body && err.body.result) box.append(json(err.body.result));
            }
          });
        } }, "Roll back…");
        box.replaceChildren(h("h3", {}, "Preview (nothing changed yet)"), previewView(got.plan), h("div", { class: "buttons" }, doIt));
      } catch (err) { outcome(box, err); }
    });
  } }, "Preview a rollback to this snapshot");
  return h("section", { class: "card", id: "snapshot" },
    h("h2", {}, "Snapshot ", h("code", {}, snap.id)),
    pairs([
      ["Taken", when(snap.created_at)], ["Why", snap.reason], ["Change", changeText(snap.change)],
      ["Verification", [badge(snap.outcome ?? "pending"), " ", snap.outcome_detail ? JSON.stringify(snap.outcome_detail) : ""]],
      ["Settled", snap.settled ? "yes" : "no"],
      ["Inventory", `${snap.memories} memories, ${snap.documents} documents`],
      ["Overrides held", snap.override_keys.length ? snap.override_keys.join(", ") : "none"],
      ["Request", snap.request_id ? short(snap.request_id) : "—"],
    ]),
    h("div", { class: "buttons" }, preview), box);
}

export async function configPage(bank, query) {
  const listing = await api(bankPath(bank, "/snapshots"));
  const chosen = listing.items.find((s) => s.id === query.snapshot) || null;
  const rows = listing.items.map((s) => h("tr", {},
    h("td", {}, h("a", { href: hashWith(bankHash(bank, "/config"), { snapshot: s.id }), "aria-current": s === chosen ? "true" : null }, h("code", {}, s.id))),
    h("td", {}, when(s.created_at)), h("td", {}, s.reason), h("td", { class: "text" }, changeText(s.change)),
    h("td", {}, badge(s.outcome ?? "pending")), h("td", { class: "num" }, s.memories)));
  return [
    h("h1", {}, `Config of ${bank}`),
    h("p", { class: "muted" }, "Every guarded config change takes a snapshot first (config, overrides, the memories it holds), then verifies nothing was lost."),
    chosen ? snapshotView(bank, chosen) : null,
    table(["Snapshot", "Taken", "Why", "What changed", "Verification", { label: "Memories", num: true }], rows,
      { empty: "No snapshot: this bank's config was never changed through memwarden." }),
  ];
}
