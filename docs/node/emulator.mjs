// emulator.mjs — one resend-emulator for a whole test run, on a free port. It is the `globalSetup` of
// vitest and Jest alike: it puts the emulator's URL in RESEND_BASE_URL before any test file imports the
// `resend` package (which reads that variable once, when it is imported).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";

const ARGS = ["--port", "0", "--no-smtp", "--clock", "frozen", "--isolate-keys", "--quiet"];

function notFound(bin) {
  return bin === "resend-emulator"
    ? "resend-emulator is not on PATH: install it into this project's environment with " +
        "`pip install /path/to/resend-emulator` (or set RESEND_EMULATOR_BIN to its full path)"
    : `RESEND_EMULATOR_BIN is ${bin}, which does not exist: point it at the resend-emulator command`;
}

/** Starts the emulator; resolves to its URL and a function that stops it. */
export async function startEmulator(extraArgs = []) {
  const bin = process.env.RESEND_EMULATOR_BIN || "resend-emulator";
  const emulator = spawn(bin, [...ARGS, ...extraArgs], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    await once(emulator, "spawn");
  } catch (error) {
    throw error.code === "ENOENT" ? new Error(notFound(bin)) : error;
  }
  const lines = createInterface({ input: emulator.stdout });
  let url;
  for await (const line of lines) {  // "resend-emulator listening on http://127.0.0.1:PORT"
    url = line.split(" ").at(-1);
    break;
  }
  if (!url?.startsWith("http")) {
    emulator.kill();
    throw new Error("resend-emulator stopped before it was listening: its error is printed above");
  }
  emulator.stdout.destroy();
  emulator.unref();
  const stop = () => emulator.kill();
  process.on("exit", stop);  // Jest has no teardown return value: the emulator stops with the run
  return { url, stop };
}

export default async function setup() {
  const { url, stop } = await startEmulator();
  process.env.RESEND_BASE_URL = url;
  return stop;  // vitest: its teardown
}
