// quickstart.mjs — one email through the emulator with Resend's Node SDK.
// Start the emulator (`resend-emulator`), then: `npm install resend` and `node quickstart.mjs`.
// The SDK reads RESEND_BASE_URL once, when it is imported (it has no base-URL option), so the address is
// set first and the SDK imported after it.
process.env.RESEND_BASE_URL ??= "http://127.0.0.1:2580";
const { Resend } = await import("resend");

const resend = new Resend("re_emulator_default_key");
const { data, error } = await resend.emails.send({
  from: "Acme <onboarding@acme.dev>",
  to: ["delivered@resend.dev"],
  subject: "Hello",
  html: "<p>It works</p>",
});
if (error) {
  console.error(`${error.name}: ${error.message} (is resend-emulator running at ${process.env.RESEND_BASE_URL}?)`);
  process.exit(1);
}
console.log(data.id);  // and the email is in the outbox: open http://127.0.0.1:2580/
