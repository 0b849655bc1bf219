"""Lowering: the passes from the flattened target IR to the target IR that code generation takes, each a pure
function from target program to target program, in the order the stage list runs them: `interfaces` (every name
an identifier), `iotas`, `cheap_maps`, `postmaps`, `thread_maps`, `context`, `prune` (the versions code generation cannot handle) and
`device_scalars`."""
