# Run by the snapshot's builder (engine-host/make-snapshot.ts) with `_polybox_source` set to the
# runner's source: the runner compiled (~110 ms of CPU in a fresh interpreter) and kept on `sys`
# with its source's hash.
import hashlib as _h, sys as _s
_s._polybox_runner = (_h.sha256(_polybox_source.encode()).hexdigest(), compile(_polybox_source, "<polybox>", "exec"))
del _h, _s, _polybox_source
