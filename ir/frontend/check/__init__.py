"""Type checking and lowering: syntax tree (ir.frontend.syntax) to the typed source IR in A-normal form.

One pass per function checks types and sizes and emits statements at the same time.

Literals. Unsuffixed literals get a literal type variable (`TV`) that unification resolves against
the context, as Futhark does: an integer literal may become any numeric type, a decimal literal any
float type; what stays unresolved at the end of a function defaults to i32 and f64. A last pass
over the function ("zonking") replaces the variables by the types they stand for.

Tuples and records are flattened away. The checker works with types that may be tuples (`Tuple`; a
record is a `Tuple` with field names, in Futhark's order) and arrays of tuples (`TArr`), and with
values (`V`) that are a type plus the flat list of IR atoms holding its leaves (scalars and arrays
of scalars), left to right. An array of tuples is held as one array per component, so `zip` and
`unzip` cost nothing, a lambda taking a tuple takes one parameter per leaf, and `.0` or `.name`
picks leaves statically.

Sum types are flattened away too: a sum type is a record of a tag and every constructor's payload,
and `match` a chain of `if`s on the tags (sums.py). A constructor whose type only a later context
gives makes the function be checked again with that type known.

Functions. Lambdas, operator sections, local functions and partial applications are function
values (`FunV`) that exist only in the checker: applying one inlines its body at the call site,
and passing one to a SOAC makes an `ir.source.Lambda`. Calls of top-level functions become
`Apply`, except when the function's result has a size computed in its body (an existential
size); such calls are inlined too.

Sizes. A dimension is a constant or the name of an i64 variable in scope. Scalar computations
are hash-consed (`n + 1` computed twice is the same variable), which gives Futhark's equality of
size expressions. Sizes Futhark cannot know (filter, slices with variable bounds, `if` branches
or loop iterations that differ in size) get a size variable bound by a statement, and the
interpreter checks them at run time.

Naming: the parameters and size parameters of a top-level function keep their source names
(those of tuple-typed parameters get fresh ones); every other variable gets a fresh name,
unique in the whole program: the user's name (or `tmp`) followed by `_` and a counter.

The package, one module per concern (the mixins are assembled into `Checker` in checker.py):

    prelude.py     the builtins' names and arities, the scalar prelude (`f32.sqrt`, `i64.max`...),
                   the operator classes
    infer.py       literal type variables (`TV`), checker types (`TArr`, sum types, `SumTV`) and
                   their shapes, unification, zonking
    values.py      the checker's values: `V`, function values (`FunV`...), `Arg`, `FunSig`
    checker.py     `Checker`: its state, fresh names, emitting statements, hash-consing, scopes,
                   showing and resolving types
    uniqueness.py  in-place updates: aliasing and consumption (mixin `Uniqueness`)
    decls.py       programs, type abbreviations, top-level functions, patterns and annotations
                   (mixin `Declarations`)
    lower.py       expressions to A-normal form: names, operators, let, if, loops, arrays,
                   indexing, updates (mixin `Lowering`)
    records.py     record literals, field access, `with` updates of fields, record patterns
                   (mixin `Records`)
    sums.py        sum types: constructors, constructor and literal patterns, `match`, `==` on
                   sums (mixin `SumTypes`)
    exhaustive.py  whether the cases of a `match` cover every value, and an example of one not
    checked.py     expressions checked at run time: assert, ranges (mixin `CheckedExpressions`)
    apply.py       function values: application, calls, inlining, the lambdas of SOACs
                   (mixin `Application`)
    builtins.py    the builtin functions: map, reduce, scan, filter, zip, ..., foldl, prelude
                   reductions (mixin `Builtins`)
"""

from incflat.ir import source as S
from incflat.ir.frontend.check.checker import Checker


def check_program(decls, filename: str, text: str) -> S.Program:
    return Checker(decls, filename, text).check_program()


def check(syntax) -> S.Program:
    """The check stage of the pipeline: an `ir.frontend.syntax.Syntax` to the typed source IR in A-normal form."""
    return check_program(list(syntax.decls), syntax.file, syntax.text)
