// What the pages share about where they are: the bank in use, links, what to stop on leaving,
// and how an error is shown.

import { ApiError } from "./api.js";
import { h, message } from "./dom.js";

const BANK = "memwarden.bank";
const leaving = [];

export const currentBank = {
  get: () => sessionStorage.getItem(BANK) || "",
  set: (bank) => { if (bank) sessionStorage.setItem(BANK, bank); },
};

export const bankHash = (bank, rest = "") => `#/b/${encodeURIComponent(bank)}${rest}`;

export function hashWith(base, query) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== "") params.set(k, v);
  const qs = params.toString();
  return `${base}${qs ? `?${qs}` : ""}`;
}

export function go(hash) {
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent("hashchange"));
  else location.hash = hash;
}

export function onLeave(fn) { leaving.push(fn); }

export function leave() { for (const stop of leaving.splice(0)) stop(); }

export function reload() { window.dispatchEvent(new HashChangeEvent("hashchange")); }

// An error as the person should read it: what went wrong, and what to do.
export function failure(err) {
  if (!(err instanceof ApiError)) return message("error", `Something failed in the page: ${err && err.message ? err.message : err}`);
  const hint = err.status === 401 ? " Give a key with the “API key” button at the top."
    : err.status === 403 && !/phrase/.test(err.message) ? " Ask for a key whose scopes reach this bank."
    : err.status === 0 ? " Retry once memwarden is back." : "";
  return message("error", err.message, hint, " ",
    h("button", { type: "button", class: "small", onclick: reload }, "Retry"));
}

// The result of an action, in place: ok or the API's refusal.
export function outcome(target, err, okText) {
  target.replaceChildren(err ? failureNoRetry(err) : message("ok", okText));
}

function failureNoRetry(err) {
  return message("error", err && err.message ? err.message : String(err));
}
