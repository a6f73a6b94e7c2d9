// Audit: the latest events, then a live tail over /warden/v1/audit/stream. EventSource cannot send
// an Authorization header, so the stream is read with fetch() and a ReadableStream reader; after a
// drop it reconnects with Last-Event-ID (the last sequence number seen) and loses nothing.
// Filters: bank, action, since (a time). Chain verification: its result, in words.

import { api, headers, url } from "../api.js";
import { badge, busy, field, h, message, short, when } from "../dom.js";
import { bankHash, failure, go, hashWith, onLeave, outcome } from "../nav.js";

const KEEP = 500;  // rows kept on the page

function isoOf(local) {  // <input type=datetime-local> → the API's ISO form, in UTC
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString().replace("Z", "+00:00");
}

function row(e) {
  return h("tr", { "data-seq": e.seq },
    h("td", { class: "num" }, e.seq), h("td", {}, when(e.ts)),
    h("td", {}, e.bank ? h("a", { href: bankHash(e.bank) }, e.bank) : "—"),
    h("td", {}, badge(e.action)), h("td", {}, e.actor),
    h("td", {}, e.memory_id && e.bank ? h("a", { href: bankHash(e.bank, `/m/${encodeURIComponent(e.memory_id)}`) }, short(e.memory_id)) : "—"),
    h("td", { class: "text" }, [e.rule, e.reason].filter(Boolean).join(" — ")));
}

const sleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
});

export async function auditPage(query) {
  const filters = { bank: query.bank || "", action: query.action || "", since: query.since || "" };
  const first = await api("/warden/v1/audit", { query: filters.since
    ? { bank: filters.bank, action: filters.action, since: filters.since, limit: 200 }
    : { bank: filters.bank, action: filters.action, tail: 100 } });
  const body = h("tbody", {});
  const events = first.events.slice().sort((a, b) => b.seq - a.seq);
  body.append(...events.map(row));
  // The stream resumes after the last event shown: after the newest of all when the page holds every
  // match, after the 200th when "since" matched more (the stream replays the rest, none skipped).
  let lastSeq = (filters.since && first.events.length >= 200 ? first.next : first.last_seq) || 0;
  const dot = h("span", { class: "live-dot" });
  const state = h("span", { id: "live-state" }, "connecting…");
  const counter = h("span", { class: "muted" });
  const problem = h("div", { "aria-live": "polite" });
  let received = 0, reconnects = 0;
  const controller = new AbortController();
  onLeave(() => controller.abort());

  function setLive(on, text) {
    dot.className = `live-dot ${on ? "on" : "off"}`;
    state.textContent = text;
  }

  function handle(block) {
    let id = null, data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("id:")) id = line.slice(3).trim();
      else if (line.startsWith("data:")) data += line.slice(5).trim();
    }
    if (!data) return;  // a keep-alive comment
    const event = JSON.parse(data);
    lastSeq = Math.max(lastSeq, Number(id || event.seq));
    body.prepend(row(event));
    while (body.children.length > KEEP) body.lastChild.remove();
    received += 1;
    counter.textContent = `${received} new since this page opened${reconnects ? ` · resumed ${reconnects}×` : ""}`;
  }

  async function follow() {
    let wait = 500;
    while (!controller.signal.aborted) {
      try {
        const response = await fetch(url("/warden/v1/audit/stream", { bank: filters.bank, action: filters.action }), {
          headers: headers({ Accept: "text/event-stream", "Last-Event-ID": String(lastSeq) }),
          credentials: "omit", cache: "no-store", signal: controller.signal });
        if (!response.ok) {
          const detail = await response.text();
          setLive(false, `refused (${response.status})`);
          problem.replaceChildren(message("error", `The live tail was refused (${response.status}): ${detail.slice(0, 300)}`));
          if (response.status === 401 || response.status === 403 || response.status === 422) return;
        } else {
          setLive(true, "live");
          problem.replaceChildren();
          wait = 500;
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += value.replace(/\r\n/g, "\n");
            let cut;
            while ((cut = buffer.indexOf("\n\n")) >= 0) {
              handle(buffer.slice(0, cut));
              buffer = buffer.slice(cut + 2);
            }
          }
        }
      } catch (err) {
        if (controller.signal.aborted) return;
      }
      setLive(false, `disconnected; resuming after #${lastSeq}…`);
      await sleep(wait, controller.signal);
      wait = Math.min(wait * 2, 10000);
      reconnects += 1;
    }
  }

  const bank = h("input", { name: "bank", autocomplete: "off" });
  bank.value = filters.bank;
  const action = h("input", { name: "action", autocomplete: "off", placeholder: "e.g. archive,review" });
  action.value = filters.action;
  const since = h("input", { name: "since", type: "datetime-local", step: 1 });
  const form = h("form", { class: "card filters", role: "search", onsubmit: (e) => {
    e.preventDefault();
    go(hashWith("#/audit", { bank: bank.value.trim(), action: action.value.replace(/\s+/g, ""), since: since.value ? isoOf(since.value) : "" }));
  } },
  field("Bank", bank), field("Actions (comma-separated)", action), field("Since (your local time)", since),
  h("div", {}, h("button", { type: "submit", class: "primary" }, "Filter")));

  const verdict = h("div", { id: "verify-result", "aria-live": "polite" });
  const verify = h("button", { type: "button", onclick: async (e) => {
    await busy(e.currentTarget, async () => {
      try {
        const r = await api("/warden/v1/audit/verify");
        verdict.replaceChildren(r.ok ? message("ok", `The chain is intact: ${r.events} events verified.`)
          : message("error", `The chain is broken: ${r.problems.length} problems.`, h("ul", {}, r.problems.map((p) => h("li", {}, `#${p.seq}: ${p.problem}`)))));
      } catch (err) { outcome(verdict, err); }
    });
  } }, "Verify the chain");

  follow().catch((err) => problem.replaceChildren(failure(err)));
  return [
    h("h1", {}, "Audit"),
    form,
    h("div", { class: "card buttons" }, h("span", {}, dot, state), counter, verify),
    verdict, problem,
    filters.since ? message("info", `Events since ${filters.since} (the first ${first.events.length}), then live.`) : null,
    h("div", { class: "scroll events" }, h("table", { id: "audit-events" },
      h("thead", {}, h("tr", {}, ["Seq", "When", "Bank", "Action", "Actor", "Memory", "Rule / reason"].map((x) => h("th", { scope: "col" }, x)))),
      body)),
    events.length ? null : h("p", { class: "muted" }, "No event matches yet; new ones appear here as they happen."),
  ];
}

