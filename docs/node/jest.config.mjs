// jest.config.mjs — `NODE_OPTIONS=--experimental-vm-modules npx jest` (native ES modules, no Babel)
export default {
  globalSetup: "./emulator.mjs",
  testMatch: ["**/*.jest.test.mjs"],
  transform: {},
};
