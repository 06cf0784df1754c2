// A Bash sandbox carries its shell variables from run to run whatever their size: a variable of
// megabytes, exported or not, is there in the next run, and every later run still works (the
// state is not replayed as script text, which just-bash's parser caps at 1 000 000 characters).
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

let runtime: Runtime;
beforeAll(async () => {
  runtime = await testRuntime();
});
afterAll(async () => {
  await runtime.close();
});

it("a 2 MB variable is carried to the next runs, and they work", async () => {
  await using sb = await Sandbox.create({ runtime });
  const set = await sb.run("bash", "x=$(head -c 2000000 /dev/zero | tr '\\0' a); echo set");
  expect(set.status).toBe("ok");
  expect(set.stdout).toBe("set\n");
  // biome-ignore lint/suspicious/noTemplateCurlyInString: Bash parameter expansions, not a template
  const next = await sb.run("bash", 'echo ${#x}; export y=$x; z="\'$x\\""');
  expect(next.stderr).toBe("");
  expect(next.status).toBe("ok");
  expect(next.stdout).toBe("2000000\n");
  const third = await sb.run(
    "bash",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Bash parameter expansions, not a template
    'echo ${#x} ${#y} ${#z}; [ "${z:0:2}" = "\'a" ] && echo quoted; printenv y | wc -c; echo ok',
  );
  expect(third.stderr).toBe("");
  expect(third.status).toBe("ok");
  expect(third.stdout).toBe("2000000 2000000 2000002\nquoted\n2000001\nok\n");
  // Unexported stays unexported; dropping it works too.
  const fourth = await sb.run("bash", "printenv x >/dev/null || echo x-not-exported; unset x y z");
  expect(fourth.stdout).toBe("x-not-exported\n");
  // biome-ignore lint/suspicious/noTemplateCurlyInString: Bash parameter expansions, not a template
  const fifth = await sb.run("bash", 'echo "[${x-unset}] [${y-unset}]"');
  expect(fifth.stdout).toBe("[unset] [unset]\n");
});
