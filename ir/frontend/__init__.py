"""The front end: source text to the typed source IR. `parse` (grammar.lark, Lark's LALR parser) builds the syntax
tree (`syntax`); `check` infers types and sizes and lowers the tree to the source IR in A-normal form."""
