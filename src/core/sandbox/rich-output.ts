// Trusted side: turns what a run produced into the images and displays of its result. Image
// files the run wrote and images passed to `display()` come back as bytes, within
// IMAGE_LIMITS: one budget per run for everything rich, and a cap per image. What does not fit is
// dropped with a note (saying how to get it) rather than sent.

import type { Display } from "../../protocol/messages.js";
import { formatBytes, IMAGE_LIMITS } from "../limits.js";
import type { RunDisplay, RunImage } from "../types.js";
import type { Workspace } from "./workspace.js";

const IMAGE_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  svg: "image/svg+xml",
  webp: "image/webp",
};

export function imageTypeOf(path: string): string | undefined {
  const ext = path.slice(path.lastIndexOf(".") + 1).toLowerCase();
  // Own keys only: a guest may name a file `x.constructor`.
  return Object.hasOwn(IMAGE_TYPES, ext) ? IMAGE_TYPES[ext] : undefined;
}

export interface RichOutput {
  images: RunImage[];
  displays: RunDisplay[];
  notes: string[];
}

export async function collectRichOutput(
  workspace: Workspace,
  filesChanged: string[],
  displays: Display[],
): Promise<RichOutput> {
  const out: RichOutput = { images: [], displays: [], notes: [] };
  let budget = IMAGE_LIMITS.maxRichBytes;
  /** True if `size` more bytes fit in the run's rich-output budget; otherwise records why not. */
  const fits = (size: number, label: string, where?: string): boolean => {
    if (size > budget) {
      out.notes.push(
        `${label} (${formatBytes(size)}) was not returned: a run returns at most ${formatBytes(IMAGE_LIMITS.maxRichBytes)} of images and displays in all; ${where ? `read it from the workspace at ${where}` : "write it to a file and read that instead"}`,
      );
      return false;
    }
    budget -= size;
    return true;
  };
  /** True if an image of `size` bytes may be returned; otherwise records why not. */
  const admit = (size: number, label: string, where?: string): boolean => {
    if (size > IMAGE_LIMITS.maxImageBytes) {
      out.notes.push(
        `${label} (${formatBytes(size)}) was not returned: images are limited to ${formatBytes(IMAGE_LIMITS.maxImageBytes)}`,
      );
      return false;
    }
    if (out.images.length >= IMAGE_LIMITS.maxImages) {
      out.notes.push(`${label} was not returned: at most ${IMAGE_LIMITS.maxImages} images per run`);
      return false;
    }
    return fits(size, label, where);
  };
  for (const d of displays) {
    if (d.mimeType.startsWith("image/") && d.data !== undefined) {
      const data = typeof d.data === "string" ? new TextEncoder().encode(d.data) : d.data;
      if (admit(data.length, `a displayed ${d.mimeType} image`))
        out.images.push({ mimeType: d.mimeType, data, path: null });
    } else {
      const size = d.text.length + (typeof d.data === "string" ? d.data.length : 0);
      if (!fits(size, `a ${d.mimeType} display`)) continue;
      out.displays.push({
        mimeType: d.mimeType,
        text: d.text,
        ...(typeof d.data === "string" ? { data: d.data } : {}),
      });
    }
  }
  for (const path of filesChanged) {
    const mimeType = imageTypeOf(path);
    if (!mimeType || !workspace.has(path)) continue;
    if (admit(workspace.sizeOf(path), `image ${path}`, path))
      out.images.push({ mimeType, data: await workspace.read(path), path });
  }
  return out;
}
