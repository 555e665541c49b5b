// signup.vitest.test.mjs — `npx vitest run`. A fresh key per test is a fresh, empty account
// (--isolate-keys): parallel workers sharing the one emulator never see each other's mail.
import { randomUUID } from "node:crypto";
import { Resend } from "resend";
import { beforeEach, expect, test } from "vitest";

const BASE = process.env.RESEND_BASE_URL;  // set by emulator.mjs, before this file imported "resend"
const control = (method, path, body) =>
  fetch(`${BASE}/_emulator${path}`, {
    method, headers: { "content-type": "application/json" }, body: body && JSON.stringify(body),
  }).then((response) => response.json());

let key, resend;
beforeEach(() => {
  key = `re_test_${randomUUID().replaceAll("-", "")}`;
  resend = new Resend(key);
});

test("a signup sends the welcome mail", async () => {
  await resend.emails.send({ from: "hello@acme.dev", to: "ada@lovelace.dev", subject: "Welcome", html: "<p>Hi</p>" });
  const mail = await control("GET", `/outbox/wait?api_key=${key}&to=ada@lovelace.dev&timeout=5`);
  expect(mail.subject).toBe("Welcome");
});

test("a 429 is retried", async () => {
  await control("POST", "/faults", { method: "POST", path: "/emails", error: "rate_limit_exceeded", times: 1, api_key: key });
  const refused = await resend.emails.send({ from: "hello@acme.dev", to: "b@acme.dev", subject: "s", text: "t" });
  expect(refused.error.name).toBe("rate_limit_exceeded");
  const sent = await resend.emails.send({ from: "hello@acme.dev", to: "b@acme.dev", subject: "s", text: "t" });
  expect(sent.data.id).toBeDefined();
});
