// Building the page: elements made with the DOM (never innerHTML from data: a memory's text is
// shown as text, whatever it holds), small shared widgets, formatting.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "class") el.className = value;
    else if (name in el && typeof value !== "string") el[name] = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

export function show(target, ...children) {
  target.replaceChildren();
  append(target, children);
}

export function message(kind, ...text) {
  return h("div", { class: `message ${kind}`, role: kind === "error" ? "alert" : "status" }, ...text);
}

export function badge(value) {
  return h("span", { class: `badge ${value ?? ""}` }, value ?? "—");
}

export function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return h("time", { datetime: iso, title: iso }, d.toLocaleString());
}

export function short(id) {
  return id ? h("code", { title: id }, String(id).slice(0, 12)) : "—";
}

export function table(headers, rows, { empty = "Nothing here.", caption } = {}) {
  if (!rows.length) return h("p", { class: "muted empty" }, empty);
  return h("div", { class: "scroll" },
    h("table", {},
      caption ? h("caption", { class: "muted" }, caption) : null,
      h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col", class: x.num ? "num" : "" }, x.label ?? x)))),
      h("tbody", {}, rows)));
}

export function pairs(entries) {
  return h("dl", { class: "pairs" }, entries.filter(Boolean).flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v ?? "—")]));
}

export function json(value) {
  return h("pre", { class: "json" }, JSON.stringify(value, null, 2));
}

export function field(label, input) {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  input.id = id;
  return h("div", {}, h("label", { for: id }, label), input);
}

// A modal question; resolves true only when the person confirms.
export function confirmAction(text, yes = "Yes") {
  const dialog = document.getElementById("confirm-dialog");
  document.getElementById("confirm-text").textContent = text;
  document.getElementById("confirm-yes").textContent = yes;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true });
  });
}

// Buttons stay disabled while their action runs: one click, one request.
export async function busy(button, work) {
  button.disabled = true;
  try { return await work(); } finally { button.disabled = false; }
}

// Previous / next over a server-side page ({total, limit, offset}).
export function pager(page, go) {
  const { total, limit, offset } = page;
  const last = Math.min(offset + limit, total);
  return h("div", { class: "pager" },
    h("span", { class: "muted" }, total ? `${offset + 1}–${last} of ${total}` : "0 of 0"),
    h("button", { type: "button", disabled: offset <= 0, onclick: () => go(Math.max(0, offset - limit)) }, "← Previous"),
    h("button", { type: "button", disabled: last >= total, onclick: () => go(offset + limit) }, "Next →"));
}
