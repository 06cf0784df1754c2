# Run at each boot with `_polybox_source` set to the runner's source: takes the builder's code
# object off `sys` and executes it if it was compiled from this source, else compiles the source
# now.
import hashlib as _polybox_h, sys as _polybox_s
_polybox_c = _polybox_s.__dict__.pop("_polybox_runner", None)
if _polybox_c is None or _polybox_c[0] != _polybox_h.sha256(_polybox_source.encode()).hexdigest():
    _polybox_c = (None, compile(_polybox_source, "<polybox>", "exec"))
del _polybox_h, _polybox_s, _polybox_source
exec(_polybox_c[1], globals())
del _polybox_c
