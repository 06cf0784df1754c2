// The guest's network requests as they cross the boundary. A guest never opens a socket or
// resolves a name: its engine turns `fetch`, `urlopen` or `curl` into a NetRequest, which travels
// worker → engine host → channel → trusted side; the trusted side checks it, makes it, and sends a
// NetReply back the same way. The request is the untrusted side's: it is a zod schema, parsed on
// the trusted side (with bounds on every field) before anything acts on it. The reply is the
// trusted side's own.

import { z } from "zod";

/** Header lines one request may carry. */
export const MAX_NET_HEADERS = 100;
/** Bytes of one header name or value. */
export const MAX_NET_HEADER_BYTES = 8 * 1024;
/** Characters of a URL. */
export const MAX_NET_URL_CHARS = 8 * 1024;

const bytes = z.custom<Uint8Array>((v) => v instanceof Uint8Array, "not bytes");

export const NetRequestSchema = z.object({
  method: z.string().regex(/^[A-Z]{1,16}$/, "not an HTTP method"),
  url: z.string().min(1).max(MAX_NET_URL_CHARS),
  headers: z
    .array(
      z.tuple([
        z
          .string()
          .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "not a header name")
          .max(256),
        z
          .string()
          .max(MAX_NET_HEADER_BYTES)
          .refine((v) => !/[\r\n\0]/.test(v), "header value with a line break"),
      ]),
    )
    .max(MAX_NET_HEADERS),
  /** The request body; its size is bounded by the run's `maxBytesOut` on the trusted side. */
  body: bytes.optional(),
  /** `manual`: a redirect comes back as the answer instead of being followed. */
  redirect: z.enum(["follow", "manual"]).optional(),
});

export type NetRequest = z.infer<typeof NetRequestSchema>;

/** Why a request got no answer: the policy refused it, a limit stopped it, or it failed. */
export type NetErrorKind = "denied" | "limit" | "failed";

export type NetReply =
  | {
      ok: true;
      status: number;
      statusText: string;
      /** The URL that answered (after redirects). */
      url: string;
      headers: [string, string][];
      body: Uint8Array;
      redirected: boolean;
    }
  | { ok: false; kind: NetErrorKind; message: string };

/** Bytes of one tunnel frame's data, either way. */
export const MAX_TUNNEL_CHUNK = 64 * 1024;
/** Characters of a CONNECT target (`host:port`, `[v6]:port`). */
export const MAX_TUNNEL_TARGET_CHARS = 300;

/**
 * What the untrusted side sends about one CONNECT tunnel of a run (native mode's proxy): `open`
 * asks for `host:port`, `data` carries the client's bytes (TLS, unreadable here), `end` closes
 * it. Checked on the trusted side before anything acts on it, like a NetRequest.
 */
export const TunnelFrameSchema = z.discriminatedUnion("op", [
  z.object({ op: z.literal("open"), target: z.string().min(1).max(MAX_TUNNEL_TARGET_CHARS) }),
  z.object({
    op: z.literal("data"),
    data: bytes.refine((b) => b.byteLength <= MAX_TUNNEL_CHUNK, "tunnel frame too large"),
  }),
  z.object({ op: z.literal("end") }),
]);

export type TunnelFrame = z.infer<typeof TunnelFrameSchema>;

/** The trusted side's frames for one tunnel: its verdict, the server's bytes, its end. */
export type TunnelReply =
  | { op: "opened" }
  | { op: "refused"; kind: NetErrorKind; message: string }
  | { op: "data"; data: Uint8Array }
  | { op: "end"; message?: string };

/** One line of a run's network record: what the guest asked for and what came of it. */
export interface NetRecordEntry {
  method: string;
  /** host[:port] as the request named it (no path: paths may carry the guest's data). */
  host: string;
  /** The HTTP status of the last hop, or null when there was no answer. */
  status: number | null;
  bytesOut: number;
  bytesIn: number;
  /** Set when the request was refused or stopped: why. */
  denied?: string;
}
