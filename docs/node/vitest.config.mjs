// vitest.config.mjs — `npx vitest run`
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { globalSetup: "./emulator.mjs", include: ["**/*.vitest.test.mjs"] },
});
