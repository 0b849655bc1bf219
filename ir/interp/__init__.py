"""The reference interpreter, the semantic oracle: `interpreter` runs a source program on numpy values (`ops` holds
its scalar operations and run-time errors, `vectorise` its fast path over whole arrays), and `target` runs a
target program under a threshold assignment by lowering the chosen versions back to SOACs."""
