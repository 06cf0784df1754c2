// T6 what a warm interpreter carries: an engine host runs a short program a few times in each
// interpreter it boots ahead of need (src/guest/engine-host/pool.ts, WARM_UP_PROGRAMS), so that
// its tenant's first run finds the engine's run path compiled. The tenant must get an interpreter
// indistinguishable from one booted for it on demand, which ran nothing: same globals, same
// shell variables, an empty workspace, nothing printed that reaches the tenant.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WARM_UP_PROGRAMS } from "../../dist/guest/engine-host/pool.js";
import { Runtime, Sandbox } from "../../dist/index.js";
import { FINGERPRINT, type Lang } from "../helpers/fingerprint.js";

const LANGS = Object.keys(FINGERPRINT) as Lang[];

let rt: Runtime;

beforeAll(async () => {
  rt = await Runtime.create({
    pool: { python: 1, javascript: 1, typescript: 1, bash: 1, ruby: 0, wasm: 0 },
  });
});

afterAll(async () => {
  await rt?.close();
});

/**
 * A sandbox's first language runs in its host's warm (warmed-up) interpreter; a second language
 * in an interpreter the host boots on demand, which has run nothing before.
 */
async function fingerprint(language: Lang, warm: boolean): Promise<string> {
  const sb = await Sandbox.create({ runtime: rt });
  try {
    if (!warm) {
      const first = language === "bash" ? "javascript" : "bash";
      expect((await sb.run(first, "true")).status).toBe("ok");
    }
    const result = await sb.run(language, FINGERPRINT[language]);
    expect(result.status, result.stderr).toBe("ok");
    expect(result.stderr).toBe("");
    return result.stdout;
  } finally {
    await sb.close();
  }
}

describe("T6 a warm interpreter carries nothing of its warm-up", () => {
  it("every language with a warm pool has a warm-up program that runs, prints and has a value", async () => {
    const sb = await Sandbox.create({ runtime: rt });
    try {
      for (const language of LANGS) {
        const program = WARM_UP_PROGRAMS[language];
        expect(program, language).toBeTruthy();
        const result = await sb.run(language, program!);
        expect(result.status, `${language}: ${result.stderr}`).toBe("ok");
        expect(result.stdout.trim(), language).not.toBe("");
        // Bash has no value of a last expression; the others end in one.
        if (language !== "bash") expect(result.value, language).not.toBeNull();
        expect(result.filesChanged, language).toEqual([]);
      }
    } finally {
      await sb.close();
    }
  }, 120_000);

  for (const language of LANGS) {
    it(`${language}: a warm interpreter's first run sees what one booted on demand sees`, async () => {
      const warmSees = await fingerprint(language, true);
      const coldSees = await fingerprint(language, false);
      expect(warmSees.length).toBeGreaterThan(0);
      expect(warmSees).toBe(coldSees);
    }, 120_000);
  }
});
