// Trusted side: which isolation layers this machine gives the engine host, for `polybox doctor`
// and for the runtime to decide how to start the host. Each layer is reported with whether it is
// active and, if not, why.

import type { OsJailStatus } from "../../core/config.js";
import { launcherReport } from "./launcher.js";
import { sandboxExecAvailable } from "./macos.js";
import { permissionFlag } from "./permissions.js";

export interface LayerReport {
  id: "L0" | "L1" | "L2" | "L3";
  name: string;
  active: boolean;
  detail: string;
}

export function isolationLayers(osJail: OsJailStatus = defaultOsJail()): LayerReport[] {
  return [
    {
      id: "L0",
      name: "engine",
      active: true,
      detail: "WebAssembly memory safety; engines see only what polybox hands them",
    },
    {
      id: "L1",
      name: "realm",
      active: true,
      detail:
        "one worker per interpreter; network globals, native bindings, builtin modules and env stripped before guest code",
    },
    {
      id: "L2",
      name: "process",
      active: true,
      detail: `engine host runs under ${permissionFlag()}: read-only engine assets, no writes, no child processes, no addons, nothing of the server's env`,
    },
    { id: "L3", name: "os", active: osJail.active, detail: osJail.detail },
  ];
}

function defaultOsJail(): OsJailStatus {
  switch (process.platform) {
    case "darwin":
      return sandboxExecAvailable()
        ? {
            active: true,
            detail: "sandbox-exec profile: no network, no writes outside the host's temp dir",
          }
        : { active: false, detail: "sandbox-exec not found at /usr/bin/sandbox-exec" };
    case "win32":
      return {
        active: false,
        detail: "Windows has no OS jail in polybox: L2 (the permission model) is the outer wall",
      };
    default: {
      const launcher = launcherReport();
      return { active: launcher.available, detail: launcher.detail };
    }
  }
}
