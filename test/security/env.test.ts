// T4 host environment: a canary variable is set in this (the server's) process before the
// runtime starts. Guests in every language look for it in their environment, the worker realm's
// process.env, the diagnostic report and /proc. It must never appear, and the guest's
// environment must hold only what the caller passed in `env` plus the engines' own defaults.
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  ENV_CANARY_NAME,
  everything,
  expectNoLeak,
  expectRuntimeAnswers,
  fixture,
  newSandbox,
  plantEnvCanary,
  type Runtime,
  type Sandbox,
  securityRuntime,
} from "../helpers/security-env.js";

let rt: Runtime;
let sb: Sandbox;
let secret: string;

beforeAll(async () => {
  secret = plantEnvCanary();
  rt = await securityRuntime();
  sb = await newSandbox(rt);
});

afterAll(async () => {
  await rt?.close();
  delete process.env[ENV_CANARY_NAME];
});

it("T4 host env read: python os.environ, import js, run_js, process.report, /proc/self/environ", async () => {
  expect(process.env[ENV_CANARY_NAME]).toBe(secret);
  const r = await sb.run(
    "python",
    fixture("attempts.py") + fixture("read-env.py", { NAME: ENV_CANARY_NAME }),
  );
  expect(r.stdout, r.stderr).toMatch(/DONE 7/);
  expectNoLeak(r, secret, ENV_CANARY_NAME);
  // The worker realm's environment is empty, not merely without the canary.
  expect(r.stdout).toContain("REALM-ENV {}");
  // Nothing of the server's own environment either (HOME and USER are Pyodide's defaults).
  expect(everything(r)).not.toContain(`'HOME': '${process.env.HOME}'`);
  await expectRuntimeAnswers(rt);
});

it("T4 host env read: javascript process.env is empty and is not the host's", async () => {
  const r = await sb.run(
    "javascript",
    `[JSON.stringify(process.env), process.env.${ENV_CANARY_NAME}, Function("return process")().env.${ENV_CANARY_NAME}, Object.keys(process.versions).join()]`,
  );
  expect(r.status).toBe("ok");
  // process.versions is the guest's constant (node, quickjs), not the host's (v8, uv, openssl...).
  expect(r.value).toBe("[ '{}', undefined, undefined, 'node,quickjs' ]");
  expectNoLeak(r, secret);
  await expectRuntimeAnswers(rt);
});

it("T4 host env read: bash env, printenv, set, declare -p, $VAR", async () => {
  const r = await sb.run(
    "bash",
    `env; printenv; set; declare -p; echo "v=$${ENV_CANARY_NAME}"; echo DONE`,
  );
  expect(r.stdout).toContain("DONE");
  expect(r.stdout).toContain("v=\n");
  expectNoLeak(r, secret, ENV_CANARY_NAME);
  await expectRuntimeAnswers(rt);
});

it("T4 host env read: only the run's own env option reaches the guest, in every language", async () => {
  const env = { GIVEN: "given-by-caller" };
  const runs = [
    await sb.run(
      "python",
      `import os\nprint(os.environ.get("GIVEN"), os.environ.get("${ENV_CANARY_NAME}"))`,
      { env },
    ),
    await sb.run("javascript", `console.log(process.env.GIVEN, process.env.${ENV_CANARY_NAME})`, {
      env,
    }),
    await sb.run("bash", `echo "$GIVEN" "[$${ENV_CANARY_NAME}]"`, { env }),
  ];
  expect(runs.map((r) => r.stdout.trim())).toEqual([
    "given-by-caller None",
    "given-by-caller undefined",
    "given-by-caller []",
  ]);
  for (const r of runs) expectNoLeak(r, secret);
});
