// Empties dist/ before a build, so that a module moved or removed in src/ leaves no stale copy
// behind for a test or an import to find. Run by `npm run build` and `prepare`, before tsc.
import { rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
rmSync(path.join(root, "dist"), { recursive: true, force: true });
