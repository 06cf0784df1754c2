// Human-readable durations for the messages that limits, queues and timeouts produce ("30 min",
// "1.5 s"), so that an error names a wait in the unit a person would use.

export function humanDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${+(ms / 60_000).toFixed(1)} min`;
  return `${+(ms / 3_600_000).toFixed(1)} h`;
}
