// Native mode runs the machine's own python3 with the packages installed on it: the data-analysis
// tasks a model writes first (statistics with numpy, a CSV with pandas, a matplotlib chart
// returned as an image) work, and a successful import earns no note about missing packages.
// CI installs Debian's python3-numpy, python3-pandas and python3-matplotlib; where they are
// missing, these tests are skipped.
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";
import { usable } from "./helpers.js";

const has = (module: string) =>
  spawnSync("/usr/bin/python3", ["-c", `import ${module}`], { stdio: "ignore" }).status === 0;

let rt: Runtime;
beforeAll(async () => {
  if (usable) rt = await testRuntime({ isolation: "auto" });
});
afterAll(async () => {
  await rt?.close();
});

describe.runIf(usable)("native data analysis", () => {
  it.runIf(has("numpy"))("mean, median and mode with numpy, and no false note", async () => {
    await using sb = await Sandbox.create({ runtime: rt, engine: "native" });
    const r = await sb.run(
      "python",
      "import numpy as np, statistics\nxs = np.array([1, 2, 2, 3, 9])\nprint(float(xs.mean()), float(np.median(xs)), statistics.mode(xs.tolist()))",
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.stdout).toBe("3.4 2.0 2\n");
    expect(r.notes ?? []).toEqual([]);
  });

  it.runIf(has("pandas"))("a CSV with pandas", async () => {
    await using sb = await Sandbox.create({ runtime: rt, engine: "native" });
    await sb.files.write("sales.csv", "region,amount\nnorth,10\nsouth,5\nnorth,7\n");
    const r = await sb.run(
      "python",
      "import pandas as pd\ndf = pd.read_csv('sales.csv')\nprint(df.groupby('region')['amount'].sum().to_dict())",
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.stdout).toBe("{'north': 17, 'south': 5}\n");
    expect(r.notes ?? []).toEqual([]);
  });

  it.runIf(has("matplotlib"))("a matplotlib chart comes back as an image", async () => {
    await using sb = await Sandbox.create({ runtime: rt, engine: "native" });
    const r = await sb.run(
      "python",
      "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [2, 4, 1])\nplt.savefig('chart.png')\nprint('saved')",
      { timeoutMs: 60_000 },
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.stdout).toBe("saved\n");
    const png = r.images.find((i) => i.path === "chart.png");
    expect(png?.mimeType).toBe("image/png");
    expect(Buffer.from(png!.data.subarray(0, 4)).toString("latin1")).toBe("\x89PNG");
    // Library caches stay out of the workspace.
    expect((await sb.files.list()).map((f) => f.path)).toEqual(["chart.png"]);
  });
});
