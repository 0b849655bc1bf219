"""The host code: the host IR (ir/host.py) of the target IR's host-level code (sizes, guards, control flow,
launches), written a statement by the rule of its expression's class (`TABLE`), which each backend prints
(codegen/pyhost.py). Also `supports`, which says whether a code version can be generated (the stage list
gives it to lowering's prune_unsupported)."""

import contextlib
import functools

from incflat.codegen import coalescing, histogram, segops, tiling
from incflat.codegen.lower.device_scalars import resident_scalars
from incflat.codegen.kernel import ErrorTable, Kernel, Launch
from incflat.codegen.cscalar import neutral_ctypes
from incflat.codegen.opencl import SOURCE_ONLY, source_name
from incflat.ir.runtime.prims import CTYPE_SIZES, PRIMS
from incflat.ir.runtime.tuning import GRID_SIZE, THREAD_BLOCK_SIZE, TILE_SIZE, USER_PARAM, Param, size_name
from incflat.ir import host as H
from incflat.ir import nodes
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.codegen.host_bodies import (computed_array, constant_literal, fresh_results, host_reads, host_shares,
                                        scalar_statement, scatter_fusions)
from incflat.codegen.in_place import WRITES, in_place_updates, memories, unread_after, written
from incflat.codegen.placement import placements
from incflat.ir.analysis import free_in_exp, use_counts
from incflat.ir.errors import Unsupported
from incflat.ir.rename import user_name
from incflat.ir.types import BOOL, Array


class HostWriter:
    """Writes the host code of a program's entry points, a statement by the rule of its expression's class
    (TABLE), and gathers the kernels and the size parameters that the code launches and reads."""

    def __init__(self, checks: bool = True):
        self.stms = []  # the host IR statements of the body being written (ir.host)
        self.entries = []  # ir.host.Def of each entry point written
        self.kernels = []  # codegen.kernel.Kernel, in the order they are written
        # scalars kept in device memory (codegen.lower.device_scalars): read back where used
        self.device_scalars = set()
        self.errors = ErrorTable(checks)
        self.entry_name = None
        self.size_params = []  # Param: the workgroup, grid and tile sizes, tuning parameters too
        self.uses = {}  # variable name -> how many times the entry point reads it
        self.fresh_arrays = set()  # arrays of the current body in buffers of their own, made by its statements
        self.in_place = set()  # the updates and scatters that write into their array (codegen.in_place)
        # arrays in scope made by `iota n` or `replicate n x` of a scalar x (name -> that expression): kernels
        # compute their elements where they read them
        self.computed_arrays = {}
        self.chain = []  # a chain of updates being read (chained): (statement, whether it writes in place)
        # segmap results made in the region an in-place update writes them into (codegen.placement): name ->
        # Placement, for the bodies being written and those nested in them
        self.placements = {}
        self.host_read = None  # the variables the entry's host code reads itself (host_reads); None: all

    @contextlib.contextmanager
    def nested(self):
        """The statements written inside (a branch's, a loop's, a version's), as a list to put in a node."""
        outer, self.stms = self.stms, []
        inner = self.stms
        try:
            yield inner
        finally:
            self.stms = outer

    def if_else(self, cond, then, otherwise=None):
        """An `if` whose branches the callables write."""
        with self.nested() as first:
            then()
        second = None
        if otherwise is not None:
            with self.nested() as second:
                otherwise()
        self.stms.append(H.If(cond, tuple(first), None if second is None else tuple(second)))

    def add_kernels(self, *kernels: Kernel):
        for k in kernels:
            k.reading_on_device(self.device_scalars)
        self.kernels += kernels

    def kernel_name(self, kind: str) -> str:
        return f"{kind}_{len(self.kernels)}"

    # ---- atoms ----

    def atom(self, a) -> H.Exp:
        if isinstance(a, S.Const):
            return H.Scalar(a.value, a.type.name)
        return self.scalar(a.name)

    def scalar(self, name: str) -> H.Exp:
        """A host variable's value; one that a kernel left on the device is read back."""
        return H.Call("to_host", (CTX, H.Var(name))) if name in self.device_scalars else H.Var(name)

    def host_type(self, v: S.Var):
        """A variable's host IR type: an array (a scalar a kernel left on the device is one of rank 0), else its
        primitive type."""
        if isinstance(v.type, Array):
            return H.ArrayType(v.type.elem.name, v.type.rank)
        return H.ArrayType(v.type.name, 0) if v.name in self.device_scalars else v.type.name

    def host_types(self, variables) -> tuple:
        return tuple(self.host_type(v) for v in variables)

    def dim(self, d) -> H.Exp:
        return H.Lit(d) if isinstance(d, int) else self.scalar(d)

    def length(self, e) -> H.Exp:
        """An iota's or a replicate's length: its size, or none where its size check is off (S.Replicate)."""
        n = self.atom(e.n)
        return n if e.checked is None else H.Cond(self.atom(e.checked), n, H.Call("max", (n, H.Scalar(0, "i64"))))

    def shape(self, t, outer=None) -> H.Tuple:
        """outer: the outermost dimension's value, where it is not t's own (a replicate's length)."""
        if not isinstance(t, Array) or not t.shape:
            return H.Tuple(())
        dims = [self.dim(d) for d in t.shape]
        return H.Tuple(tuple([outer or dims[0]] + dims[1:]))

    # ---- entries ----

    def group_size(self, kernel: str, kernels: list):
        """The workgroup size of a segop's kernels: its own tuning parameter, else the device default, and
        no more than every one of them can be launched with (registers)."""
        name = size_name(self.entry_name, kernel, THREAD_BLOCK_SIZE)
        self.size_params.append(Param(name, THREAD_BLOCK_SIZE))
        names = tuple(k.name for k in kernels)
        size = H.Call("ctx.size", (H.Lit(name), H.Field("group_size"), H.Field("max_group_size")))
        self.stms.append(H.Assign("group_size", H.Call("ctx.kernel_group_size", (H.Lit(names), size)), H.INT))

    def groups_per_segment(self, kernel: str, how: str = "groups_per_segment"):
        """How many workgroups (or threads) share a segment, from the kernel's grid size."""
        param = Param(size_name(self.entry_name, kernel, GRID_SIZE), GRID_SIZE)
        if param not in self.size_params:
            self.size_params.append(param)
        size = H.Call("ctx.size", (H.Lit(param.name), H.Field("num_groups"), MOST_GROUPS))
        self.stms.append(H.Assign("gps", H.Call(how, (H.Var("segments"), H.Var("width"), size, GROUP_SIZE)), H.INT))

    def entry(self, f: S.FunDef):
        self.entry_name = f.name
        self.uses = use_counts(f.body)
        self.host_read = host_reads(f.body)
        self.device_scalars = resident_scalars(f.body)
        with self.nested() as body:
            bound = set()
            for p in f.params:
                if isinstance(p.type, Array):
                    for k, d in enumerate(p.type.shape):
                        if isinstance(d, str) and d not in bound:
                            self.stms.append(H.Assign(d, H.Cast("i64", H.Shape(H.Var(p.name), k)), "i64"))
                            bound.add(d)
                        else:
                            size = H.Lit(d) if isinstance(d, int) else H.Var(d)
                            self.stms.append(H.Do(H.Call("check_size", (
                                size, H.Shape(H.Var(p.name), k), H.Lit(user_name(str(d))), H.Lit(user_name(p.name))))))
            self.body(f.body)
            self.stms.append(H.Return(tuple(self.atom(a) for a in f.body.result)))
        self.entries.append(H.Def(f.name, tuple(p.name for p in f.params), tuple(self.host_type(p) for p in f.params),
                                  tuple(body)))

    def body(self, body: S.Body):
        outer, self.fresh_arrays = self.fresh_arrays, set()
        outer_computed, outer_placements = self.computed_arrays, self.placements
        self.placements = self.placements | placements(body, self.uses, self.in_place)
        memory = None
        fused = scatter_fusions(body, self.uses)
        for t, stm in enumerate(body.stms):
            if isinstance(stm.exp, WRITES) and written(stm.exp).name in self.fresh_arrays:
                # an array of the body's own that nothing reads after the update (LUD's last diagonal block)
                memory = memories(body, host_shares) if memory is None else memory
                if unread_after(body, t, stm, memory):
                    self.in_place.add(stm.pat[0].name)
            if self.chained(body, t, stm):
                pass  # written with the last update of its chain
            elif t in fused:
                self.fused_scatter(body.stms[fused[t]], stm)
            elif t not in fused.values():  # (a fused segmap runs in its scatter's place)
                self.stm(stm)
            self.fresh_arrays |= fresh_results(stm, self.in_place)
            made = computed_array(stm, self.computed_arrays)
            if made is not None:
                self.computed_arrays = self.computed_arrays | {stm.pat[0].name: made}
        self.fresh_arrays, self.computed_arrays, self.placements = outer, outer_computed, outer_placements

    def chained(self, body: S.Body, t: int, stm: S.Stm) -> bool:
        """Updates of one array one after another, each writing an array value into the array the one before
        made, which nothing else reads, in place (LUD's four blocks a step): written as one `update_many`, which
        copies them all in one launch where their targets are disjoint. True where stm is written so, or will
        be with the rest of its chain (self.chain holds the updates read so far)."""
        e = stm.exp
        if self.chain and scalar_statement(stm):
            return False  # (a slice's size, say: written before the chain, which it does not read)
        link = (isinstance(e, S.Update) and isinstance(e.value, S.Var) and isinstance(e.value.type, Array)
                and e.value.name not in self.device_scalars)
        if self.chain and not (link and e.arr.name == self.chain[-1][0].pat[0].name and self.writable(stm.pat)):
            self.flush_chain()
        following = next((s for s in body.stms[t + 1:] if not scalar_statement(s)), None) if link else None
        continues = (following is not None and isinstance(following.exp, S.Update)
                     and following.exp.arr.name == stm.pat[0].name and self.uses.get(stm.pat[0].name) == 1)
        if not continues and not self.chain:
            return False
        self.chain.append((stm, self.writable(stm.pat)))
        if not continues:
            first, in_place = self.chain[0]
            updates = tuple(H.Tuple((self.index_tuple(u.exp.idxs), H.Var(u.exp.value.name), where(u.loc)))
                            for u, _ in self.chain)
            self.stms.append(H.Assign(stm.pat[0].name, H.Call(
                "update_many", (CTX, H.Var(first.exp.arr.name), H.Tuple(updates)), (("in_place", H.Lit(in_place)),)),
                self.host_type(stm.pat[0])))
            self.chain = []
        return True

    def flush_chain(self):
        """The updates of a chain read so far, one by one (the next statement did not continue it)."""
        chain, self.chain = self.chain, []
        for u, _ in chain:
            self.stm(u)

    def stm(self, stm: S.Stm):
        """Writes one statement by the rule of its expression's class (TABLE)."""
        value = TABLE.rule(stm.exp)(self, stm.exp, stm.pat, stm.loc)
        if value is not None:
            self.stms.append(H.Assign(stm.pat[0].name, value, self.host_type(stm.pat[0])) if len(stm.pat) == 1
                             else H.Bind(tuple(p.name for p in stm.pat), (value,), self.host_types(stm.pat),
                                         unpack=True))

    # The rules of TABLE: rule(writer, e, pat, loc) -> the Python expression of e's value, which the statement
    # binds pat to, or None where the rule writes the statement's code itself.

    def atom_exp(self, e: S.AtomExp, pat, loc):
        if self.unmade(e, pat, loc):  # another name (a coercion) of an array kernels compute
            self.coercion_checks(pat[0], e.x, loc, made=False)
            return None
        self.coercion_checks(pat[0], e.x, loc)
        return self.passed(pat[0], e.x)

    def binop(self, e: S.BinOp, pat, loc) -> H.Exp:
        x, y, t = self.atom(e.x), self.atom(e.y), e.x.type
        if e.op in ("==", "!=", "<", "<=", ">", ">="):
            return H.Cast("bool", H.Op(e.op, x, y))
        if e.op in ("&&", "||"):
            return H.Cast("bool", H.Op("and" if e.op == "&&" else "or", x, y))
        if t.is_float:
            if e.op == "%":
                return H.Cast(t.name, H.Call("np.fmod", (x, y)))
            return H.Cast(t.name, H.Op(e.op, x, y))
        if e.op in ("/", "%", "//", "%%"):
            return H.Call("int_div", (x, y, H.Lit(e.op), where(loc)))
        if e.op == "**":
            return H.Call("int_pow", (H.Dtype(t.name), x, y, where(loc)))
        return H.Call("wrap", (H.Dtype(t.name), H.Op(e.op, self.python_int(e.x), self.python_int(e.y))))

    def unop(self, e: S.UnOp, pat, loc) -> H.Exp:
        op = {"neg": "-", "!": "not ", "~": "~"}[e.op]
        return H.Cast(e.type.name, H.Unary(op, self.atom(e.x)))

    def primcall(self, e: S.PrimCall, pat, loc) -> H.Exp:
        return H.Call("prim_call", (H.Lit(e.fn), H.Dtype(e.type.name), *(self.atom(a) for a in e.args)))

    def rearrange(self, e: S.Rearrange, pat, loc) -> H.Exp:
        return H.Method(H.Var(e.arr.name), "permute", (H.Lit(tuple(e.perm)),))

    def unmade(self, e, pat, loc) -> bool:
        """Whether an array that kernels compute the elements of (computed_array) is read by kernels alone: it is
        then not made, and only its size is checked."""
        if (self.host_read is None or pat[0].name in self.host_read
                or computed_array(S.Stm(pat, e, loc), self.computed_arrays) is None):
            return False
        if not isinstance(e, S.AtomExp):  # (another name of one has its size checked where it is made)
            self.stms.append(H.Do(H.Call("check_sizes", (H.Tuple((self.length(e),)), H.Lit(source_name(e)),
                                                          where(loc)))))
        return True

    def iota(self, e: S.Iota, pat, loc):
        if self.unmade(e, pat, loc):
            return None
        return H.Call("iota", (CTX, self.length(e), H.Dtype(e.elem.name), where(loc)))

    def replicate(self, e: S.Replicate, pat, loc):
        if self.unmade(e, pat, loc):
            return None
        t = pat[0].type
        shape = self.shape(t, self.length(e) if e.checked is not None else None)
        return H.Call("replicate", (CTX, self.kept(e.x), shape, dtype(t), where(loc)))

    def index(self, e: S.Index, pat, loc) -> H.Exp:
        return H.Call("index", (CTX, H.Var(e.arr.name), self.index_tuple(e.idxs), where(loc)))

    def update(self, e: S.Update, pat, loc) -> H.Exp:
        return H.Call("update", (CTX, H.Var(e.arr.name), self.index_tuple(e.idxs), self.kept(e.value), where(loc)),
                      (("in_place", H.Lit(self.writable(pat))),))

    def tuning_param(self, e: S.TuningParam, pat, loc) -> H.Exp:
        param = Param(e.name, USER_PARAM)
        if param not in self.size_params:
            self.size_params.append(param)
        return H.Call("ctx.user_param", (H.Lit(e.name), self.atom(e.default)))

    def assertion(self, e: S.Assert, pat, loc) -> None:
        values = H.Tuple(tuple(self.atom(a) for a in e.values))
        self.stms.append(H.Do(H.Call("check_assertion", (self.atom(e.cond), H.Lit(e.message), values, where(loc)))))

    def array_lit(self, e: S.ArrayLit, pat, loc) -> H.Exp:
        if constant_literal(e):
            return H.Call("constant_array", (CTX, H.Tuple(tuple(self.atom(a) for a in e.elems)), dtype(pat[0].type)))
        return H.Call("array_literal", (CTX, H.List(tuple(self.kept(a) for a in e.elems)), dtype(pat[0].type),
                                        where(loc)))

    def concat(self, e: S.Concat, pat, loc) -> H.Exp:
        return H.Call("concat", (CTX, H.List(tuple(H.Var(a.name) for a in e.arrs)), self.atom(e.size), where(loc)))

    def rotate(self, e: S.Rotate, pat, loc) -> H.Exp:
        return H.Call("rotate", (CTX, self.atom(e.amount), H.Var(e.arr.name)))

    def reshape(self, e: S.Reshape, pat, loc) -> H.Exp:
        return H.Call("reshape", (CTX, H.Tuple(tuple(self.atom(a) for a in e.shape)), H.Var(e.arr.name), where(loc)))

    def scatter(self, e: S.Scatter, pat, loc) -> H.Exp:
        return H.Call("scatter", (CTX, H.Var(e.dest.name), H.Var(e.idxs.name), H.Var(e.vals.name)),
                      (("in_place", H.Lit(self.writable(pat))),))

    def filter(self, e: S.Filter, pat, loc) -> None:
        """The predicate in a kernel, the compaction on the host."""
        flags = S.Var(f"{pat[0].name}_flags", Array(BOOL, (S.dim_of(e.width),)))
        self.segmap(T.SegMap(1, (T.Binding(e.width, e.lam.params, e.arrs),), e.lam.body, (flags.type,)),
                    (flags,), loc)
        arrays = H.List(tuple(H.Var(a.name) for a in e.arrs))
        self.stms.append(H.Bind(tuple(p.name for p in pat),
                                (H.Call("compact", (CTX, H.Var(flags.name), arrays, where(loc))),),
                                self.host_types(pat), unpack=True))

    def if_(self, e: S.If, pat, loc) -> None:
        self.if_else(self.atom(e.cond), lambda: self.branch(e.then, pat), lambda: self.branch(e.else_, pat))

    def owned(self, name: str) -> bool:
        """Whether an array's buffer is its own (made by a statement of the current body, not a view) and
        nothing but the statement at hand reads it: a consuming operation may then write into it."""
        return name in self.fresh_arrays and self.uses.get(name) == 1

    def writable(self, pat) -> bool:
        """Whether an update or a scatter may write into its array: one the body made, or a loop's state, that
        nothing reads after the write (body, in_place_updates; the runtime copies where the value written
        shares the array's buffer)."""
        return pat[0].name in self.in_place

    def index_tuple(self, idxs) -> H.Tuple:
        """The runtime's indices: an integer, or (start, end, stride, size) for a slice."""
        return H.Tuple(tuple(H.Tuple(tuple(self.atom(a) for a in (i.start, i.end, i.stride, i.size)))
                             if isinstance(i, S.DimSlice) else self.atom(i) for i in idxs))

    def guard(self, e: T.Guard, pat, loc):
        """`threshold <= par`; each version's kernels are recorded for -P (ir.host.Guard)."""
        with self.nested() as then:
            self.branch(e.then, pat)
        with self.nested() as otherwise:
            self.branch(e.else_, pat)
        self.stms.append(H.Guard(e.threshold, e.kind, tuple(self.atom(a) for a in e.par), e.local_bytes,
                                 tuple(then), tuple(otherwise)))

    def coercion_checks(self, target: S.Var, source, loc, made: bool = True):
        """`y :> [n]t`: the array must have the sizes its new type claims (those of its type where it is not
        made: an array that kernels compute, unmade)."""
        if not isinstance(target.type, Array):
            return
        shape = H.Shape(H.Var(source.name)) if made else self.shape(source.type)
        for k, (new, old) in enumerate(zip(target.type.shape, source.type.shape)):
            if new != old:
                self.stms.append(H.Do(H.Call("check_coercion", (self.dim(new), shape, H.Lit(k), where(loc)))))

    def loop(self, e: S.Loop, pat, loc):
        """A loop whose updates write into its array state (LUD's blocks, NW's scatters) starts from a state of
        its own: its initial array, where the loop owns it, else a copy (one copy, not one a step)."""
        params = [p.name for p in e.params]
        chains = in_place_updates(e, host_shares)
        self.in_place |= chains
        inits = [H.Call("manifest", (CTX, H.Var(a.name)))
                 if isinstance(r, S.Var) and r.name in chains and not self.owned(a.name)
                 else self.atom(a) for a, r in zip(e.init, e.body.result)]
        self.stms.append(H.Bind(tuple(params), tuple(inits), self.host_types(e.params)))
        with self.nested() as body:
            self.loop_sizes(e)
            if isinstance(e.form, S.WhileLoop):
                self.body(e.form.cond)
                self.if_else(H.Unary("not ", self.atom(e.form.cond.result[0])), lambda: self.stms.append(H.Break()))
            self.body(e.body)
            self.stms.append(H.Bind(tuple(params), tuple(self.atom(a) for a in e.body.result),
                                    self.host_types(e.params)))
        if isinstance(e.form, S.ForLoop):
            i = e.form.i
            self.stms.append(H.For(i.name, i.type.name, self.atom(e.form.bound), tuple(body)))
        else:
            self.stms.append(H.While(tuple(body)))
        self.loop_sizes(e)
        final = [H.Cast("i64", H.Var(n)) for n in e.size_params] + [H.Var(p) for p in params]
        self.stms.append(H.Bind(tuple(p.name for p in pat), tuple(final), self.host_types(pat)))

    def loop_sizes(self, e: S.Loop):
        """Binds the loop's size parameters from the current parameters' shapes."""
        for n in e.size_params:
            for p in e.params:
                if isinstance(p.type, Array) and n in p.type.shape:
                    self.stms.append(H.Assign(n, H.Cast("i64", H.Shape(H.Var(p.name), p.type.shape.index(n))), "i64"))
                    break

    def branch(self, body: S.Body, pat):
        """A branch's statements, and pat bound to its results."""
        self.body(body)
        values = tuple(self.passed(p, a) for p, a in zip(pat, body.result))
        self.stms.append(H.Assign(pat[0].name, values[0], self.host_type(pat[0])) if len(pat) == 1
                         else H.Bind(tuple(p.name for p in pat), values, self.host_types(pat)))

    def passed(self, target: S.Var, a) -> H.Exp:
        """The value of `a` for `target`: a scalar in device memory stays there if the target does too."""
        return self.kept(a) if target.name in self.device_scalars else self.atom(a)

    def kept(self, a) -> H.Exp:
        """An atom as it is: a scalar in device memory is not read back (for the runtime's functions that copy
        it on the device, and for targets that stay there too)."""
        return H.Var(a.name) if isinstance(a, S.Var) else self.atom(a)

    def python_int(self, a) -> H.Exp:
        """An integer atom as a Python int (a constant written as one: host code runs it at every step)."""
        return H.Lit(int(a.value)) if isinstance(a, S.Const) else H.Call("int", (self.atom(a),))

    # ---- segops ----

    def alloc_outputs(self, pat, types, loc=None, interleave: int = 0, interleaved=()) -> list:
        """A segop's results; a negative size (computed from an invalid expression, such as the range 0..<-1
        a map's body makes) is an error at the segop's position, unless the array has no element at all.
        The results marked in `interleaved` get their first `interleave` dimensions innermost."""
        for k, (p, t) in enumerate(zip(pat, types)):
            layout = (("interleave", H.Lit(interleave)),) if k < len(interleaved) and interleaved[k] else ()
            placed = self.placements.get(p.name)
            if placed is not None:
                made = H.Call("empty_in_region", (CTX, *self.region_args(placed), H.Lit(placed.points), self.shape(t),
                                                  dtype(t), where(loc)))
            else:
                made = H.Call("ctx.empty", (self.shape(t), dtype(t), where(loc)), layout)
            self.stms.append(H.Assign(p.name, made, self.host_type(p)))
        return [p.name for p in pat]

    def region_args(self, placed) -> tuple:
        """empty_in_region's root, indices, the chain's other indices, and the arrays it checks (those made:
        an array kernels compute has no memory to share)."""
        def names(arrays):
            return H.Tuple(tuple(H.Var(n) for n in arrays if n not in self.computed_arrays))
        others = H.Tuple(tuple(self.index_tuple(idxs) for idxs in placed.others))
        return (H.Var(placed.root.name), self.index_tuple(placed.idxs), others, names(placed.same),
                names(placed.apart))

    def args(self, kernel: Kernel, outs: list, dests=(), gps: str = "gps") -> tuple:
        """A launch's memory arguments (a list) and scalars (a tuple)."""
        return kernel.host_args(Launch(tuple(outs), tuple(dests), gps, self.scalar))

    def launch(self, kernel: Kernel, global_size, args, reach):
        """reach: a bound on the flat indices the kernel forms (its iteration space, and how far past it a
        thread's last look-ahead goes), which picks the kernel's index type."""
        self.stms.append(H.Assign("global_size", global_size, H.INT))
        self.stms.append(H.Do(H.Call("ctx.launch", (H.Lit(kernel.name), GLOBAL_SIZE, GROUP_SIZE, *args, reach))))

    def widths(self, ctx) -> list:
        """A context's widths as Python ints."""
        return [H.Call("int", (self.atom(b.width),)) for b in ctx]

    def segmap(self, e: T.SegMap, pat, loc):
        name = self.kernel_name("segmap")
        plan = tiling.tile_plan(e)
        if plan:
            return self.tiled_segmap(name, e, plan, pat, loc)
        k = segops.segmap_kernel(name, e, loc, self.errors, self.computed_arrays)
        self.add_kernels(k)
        for array, inner in coalescing.coalesced_inputs(e).items():
            self.stms.append(H.Assign(array, H.Call("coalesced", (CTX, H.Var(array), H.Lit(inner))),
                                      self.host_type(free_in_exp(e)[array])))
        outs = self.alloc_outputs(pat, e.types, loc, len(e.ctx), coalescing.interleaved_results(e))
        self.stms.append(H.Assign("space", H.product(self.widths(e.ctx)), H.INT))
        level0 = T.level0_segops(e.body)  # the intra-group version
        if level0:  # a workgroup per point, as wide as the widest level-0 segop or as the kernel can be
            # (its registers may allow fewer threads than the device's most: its threads then take several
            # elements each)
            widest = H.Call("max", (*(H.product(self.widths(op.ctx)) for op in level0), H.Lit(1)))
            size = H.Call("min", (widest, H.Field("max_group_size")))
            self.stms.append(H.Assign("group_size", H.Call("ctx.kernel_group_size", (H.List((H.Lit(k.name),)), size)),
                                      H.INT))
            self.launch(k, H.Op("*", SPACE, GROUP_SIZE), self.args(k, outs), SPACE)
        else:
            self.group_size(name, [k])
            self.launch(k, rounded(SPACE), self.args(k, outs), SPACE)

    def fused_scatter(self, segmap: S.Stm, scatter: S.Stm):
        """A scatter whose indices and values a segmap makes (scatter_fusions): the segmap's kernel writes
        them into the destination, which is the scatter's own array or a copy as for any scatter (and a copy
        where the kernel reads the destination's buffer)."""
        e, s = segmap.exp, scatter.exp
        name = self.kernel_name("segmap")
        made = [p.name for p in segmap.pat]
        k = segops.scatter_segmap_kernel(name, e, s.dest.type, made.index(s.idxs.name), made.index(s.vals.name),
                                         segmap.loc, self.errors, self.computed_arrays)
        self.add_kernels(k)
        out = scatter.pat[0].name
        reads = [H.Var(n) for n, v in free_in_exp(e).items()
                 if isinstance(v.type, Array) and n not in self.computed_arrays]
        self.stms.append(H.Assign(out, H.Call("destination", (CTX, H.Var(s.dest.name),
                                                              H.Lit(self.writable(scatter.pat)), *reads)),
                                  self.host_type(scatter.pat[0])))
        self.stms.append(H.Assign("space", self.widths(e.ctx[:1])[0], H.INT))
        self.group_size(name, [k])
        self.launch(k, rounded(SPACE), self.args(k, [out]), H.Call("max", (SPACE, H.Shape(H.Var(out), 0))))

    def tiled_segmap(self, name: str, e: T.SegMap, plan, pat, loc):
        """A workgroup of tile x tile threads a block of the two innermost dimensions."""
        k = tiling.tiled_segmap_kernel(name, e, plan, self.errors, self.computed_arrays)
        self.add_kernels(k)
        outs = self.alloc_outputs(pat, e.types, loc)
        param = Param(size_name(self.entry_name, name, TILE_SIZE), TILE_SIZE)
        self.size_params.append(param)
        widths = self.widths(e.ctx)
        tile = H.Var("tile")
        self.stms.append(H.Assign("tile", H.Call("ctx.tile_size", (H.Lit(name), H.Lit(param.name))), H.INT))
        self.stms.append(H.Assign("group_size", H.Op("*", tile, tile), H.INT))
        self.stms.append(H.Assign("space", H.product(widths), H.INT))
        blocks = H.product(widths[:-2] + [H.Call("ceil_div", (w, tile)) for w in widths[-2:]])
        self.launch(k, H.Op("*", blocks, GROUP_SIZE), self.args(k, outs), SPACE)

    def histogram(self, e: S.Hist, pat, loc):
        """reduce_by_index: the bins start as a copy of the destination (or are the destination, where its
        buffer is its own and nothing else reads it); then codegen.histogram's kernels: a sub-histogram in
        local memory per workgroup where the bins fit there and are few against the elements (each
        workgroup combines all of its bins into the result), else a thread per element straight into it."""
        name = self.kernel_name("hist")
        local, direct = (histogram.histogram_kernel(name + suffix, e, loc, self.errors, suffix == "_local")
                         for suffix in ("_local", ""))
        self.add_kernels(local, direct)
        out = pat[0].name
        if self.owned(e.dest.name):  # no one else reads its buffer: updated in place
            self.stms.append(H.Assign(out, H.Var(e.dest.name), self.host_type(pat[0])))
        else:
            self.stms.append(H.Assign(out, H.Call("manifest", (CTX, H.Var(e.dest.name))), self.host_type(pat[0])))
        self.group_size(name, [local, direct])
        self.stms.append(H.Bind(("space", "bins"), (H.Call("int", (self.atom(e.width),)), H.Shape(H.Var(out), 0)), (H.INT, H.INT)))
        grid = Param(size_name(self.entry_name, name, GRID_SIZE), GRID_SIZE)
        self.size_params.append(grid)
        groups = H.Var("groups")
        grid_size = H.Call("ctx.size", (H.Lit(grid.name), H.Field("num_groups"), MOST_GROUPS))
        self.stms.append(H.Assign("groups", H.Call("min", (H.Call("ceil_div", (SPACE, GROUP_SIZE)), grid_size)), H.INT))
        size = PRIMS[e.dest.type.elem.name].size
        bins = H.Var("bins")
        fits = H.Op("and", H.Op("<=", H.Op("*", bins, H.Lit(size)), H.Op("//", H.Field("local_mem_size"), H.Lit(2))),
                    H.Op("<=", H.Op("*", groups, bins), SPACE))
        self.if_else(fits,
                     lambda: self.launch(local, H.Op("*", groups, GROUP_SIZE), self.args(local, [out]),
                                         H.Op("+", SPACE, GLOBAL_SIZE)),
                     lambda: self.launch(direct, rounded(SPACE), self.args(direct, [out]), SPACE))

    def segscan(self, e: T.SegScan, pat, loc):
        name = self.kernel_name("segscan")
        kernels = segops.segscan_kernels(name, e, loc, self.errors, self.computed_arrays)
        self.add_kernels(*kernels)
        scan = kernels[-1]
        outs = self.alloc_outputs(pat, e.types, loc)
        per_thread = sum(CTYPE_SIZES[c] * (scan.chunk + 2) + 1 for c in neutral_ctypes(e))
        self.group_size(name, kernels)
        self.stms.append(H.Assign("group_size", H.Call("ctx.fit_local", (GROUP_SIZE, H.Lit(per_thread))), H.INT))
        self.stms.append(H.Assign("space", H.product(self.widths(e.ctx)), H.INT))
        blocks = H.Var("blocks")
        chunk = H.Lit(scan.chunk)
        self.stms.append(H.Assign("blocks", H.Call("ceil_div", (SPACE, H.Op("*", GROUP_SIZE, chunk))), H.INT))
        reach = H.Op("*", H.Op("*", blocks, GROUP_SIZE), chunk)
        if len(kernels) == 1:
            self.launch(scan, H.Op("*", blocks, GROUP_SIZE), self.args(scan, outs), reach)
            return
        # (named after the kernel: each segscan's temporaries are variables of their own types)
        totals = [f"{name}_totals{i}" for i in range(len(outs))]
        prefixes = [f"{name}_prefixes{i}" for i in range(len(outs))]
        flags = f"{name}_total_flags"
        for t, p, a in zip(totals, prefixes, e.neutral):
            for made in (t, p):
                self.stms.append(H.Assign(made, H.Call("ctx.empty", (H.Tuple((blocks,)), dtype(a.type))),
                                          H.ArrayType(a.type.name, 1)))
        self.stms.append(H.Assign(flags, H.Call("ctx.empty", (H.Tuple((blocks,)), H.Dtype("u8"))),
                                  H.ArrayType("u8", 1)))

        def block_totals():
            self.launch(kernels[0], H.Op("*", blocks, GROUP_SIZE), self.args(kernels[0], [], totals + [flags]),
                        reach)
            self.launch(kernels[1], GROUP_SIZE, self.args(kernels[1], prefixes, totals + [flags], "blocks"),
                        reach)
        self.if_else(H.Op(">", blocks, H.Lit(1)), block_totals)
        self.launch(scan, H.Op("*", blocks, GROUP_SIZE), self.args(scan, outs, prefixes), reach)

    def segred(self, e: T.SegRed, pat, loc):
        name = self.kernel_name("segred")
        k1, k3, k4 = segops.segred_kernels(name, e, loc, self.errors, self.computed_arrays)
        self.add_kernels(k1, k3, k4)
        outs = self.alloc_outputs(pat, e.types, loc)
        self.group_size(name, [k1, k3, k4])
        segments, width, gps = H.Var("segments"), H.Var("width"), H.Var("gps")
        self.stms.append(H.Bind(("segments", "width"), (H.product(self.widths(e.ctx[:-1]) or [H.Lit(1)]),
                                                        self.widths(e.ctx[-1:])[0]), (H.INT, H.INT)))
        space = H.Op("*", segments, width)
        # the segment's arrays' strides, where the host knows them: whether they are all 1
        strides = [st.host for st in k3.inner_strides]
        contiguous = (H.Lit(False) if None in strides else
                      H.Lit(True) if not strides else
                      functools.reduce(lambda a, b: H.Op("and", a, b), [H.Op("==", st, H.Lit(1)) for st in strides]))
        parts = [f"{name}_part{i}" for i in range(len(outs))]  # (named after the kernel: of its types)
        beyond = H.Op("+", space, H.Op("*", H.Lit(4), GLOBAL_SIZE))

        def partial_results():
            for part, a in zip(parts, e.neutral):
                self.stms.append(H.Assign(part, H.Call("ctx.empty", (H.Tuple((H.Op("*", segments, gps),)),
                                                                     dtype(a.type))), H.ArrayType(a.type.name, 1)))

        def thread_per_segment():
            self.groups_per_segment(name, "thread_parts")  # a thread per segment (and part)

            def parts_then_combine():
                partial_results()
                self.launch(k3, rounded(H.Op("*", segments, gps)), self.args(k3, [], parts), space)
                self.launch(k4, rounded(segments), self.args(k4, outs, parts), space)
            self.if_else(H.Op("==", gps, H.Lit(1)),
                         lambda: self.launch(k3, rounded(segments), self.args(k3, [], outs), space),
                         parts_then_combine)

        def groups_per_segment():
            self.groups_per_segment(name)
            block_size = size_name(self.entry_name, name, THREAD_BLOCK_SIZE)
            self.if_else(H.Op("and", H.Op("==", gps, H.Lit(1)), H.Unary("not ", H.Param(block_size))),
                         lambda: self.stms.append(H.Assign("group_size", H.Call("segment_group_size",
                                                                                 (GROUP_SIZE, width)), H.INT)))

            def in_parts():
                partial_results()
                self.launch(k1, H.product([segments, gps, GROUP_SIZE]), self.args(k1, outs, parts), beyond)
            # with one workgroup a segment, no parts: the outputs stand in for their buffers
            self.if_else(H.Op("==", gps, H.Lit(1)),
                         lambda: self.launch(k1, H.Op("*", segments, GROUP_SIZE), self.args(k1, outs, outs), beyond),
                         in_parts)
        many = H.Op(">=", segments, H.Lit(32))
        narrow = H.Op("or", H.Op("<", width, GROUP_SIZE), H.Unary("not ", contiguous))
        # a thread a segment where there are many narrow (or strided) ones, else workgroups a segment
        self.if_else(H.Op("and", many, narrow), thread_per_segment, groups_per_segment)


def rounded(count) -> H.Exp:
    """count threads, rounded up to whole workgroups."""
    return H.Op("*", H.Call("ceil_div", (count, GROUP_SIZE)), GROUP_SIZE)


def where(loc) -> H.Lit:
    """The source position a run-time error reports."""
    return H.Lit(str(loc) if loc else "")


def dtype(t) -> H.Dtype:
    """The element type of an array type, or a scalar type."""
    return H.Dtype(t.elem.name if isinstance(t, Array) else t.name)


CTX = H.Var("ctx")  # the run's context, which the runtime's functions take first
SPACE, GROUP_SIZE, GLOBAL_SIZE = H.Var("space"), H.Var("group_size"), H.Var("global_size")
MOST_GROUPS = H.Op("-", H.Op("**", H.Lit(2), H.Lit(31)), H.Lit(1))  # a grid size's bound


# ---- which versions code can be generated for ----

def supports(body: S.Body):
    """None when code can be generated for every statement of a body (a code version), else the
    `Unsupported` error that generating it raises: it names the construct and its position."""
    try:
        HostWriter().body(body)
    except Unsupported as e:
        return e
    return None


def unsupported(w: HostWriter, e, pat, loc):
    """A SOAC at the host level has no host code of its own (flattening makes each a segop): a version that
    holds one is pruned (prune_unsupported)."""
    raise Unsupported(f"{source_name(e)} at the top level of an entry point", loc)


# The rule of each expression class at the host level: rule(writer, e, pat, loc) -> the Python expression that
# the statement binds pat to, or None where the rule writes the statement's code (HostWriter.stm).
TABLE = nodes.Table(f"{__name__}.TABLE", "target", {
    S.AtomExp: HostWriter.atom_exp, S.BinOp: HostWriter.binop, S.UnOp: HostWriter.unop,
    S.PrimCall: HostWriter.primcall, S.Rearrange: HostWriter.rearrange, S.Iota: HostWriter.iota,
    S.Replicate: HostWriter.replicate, S.Index: HostWriter.index, S.Update: HostWriter.update,
    S.TuningParam: HostWriter.tuning_param, S.Assert: HostWriter.assertion, S.ArrayLit: HostWriter.array_lit,
    S.Concat: HostWriter.concat, S.Rotate: HostWriter.rotate, S.Reshape: HostWriter.reshape,
    S.Scatter: HostWriter.scatter, S.Hist: HostWriter.histogram, S.Loop: HostWriter.loop,
    S.Filter: HostWriter.filter, S.If: HostWriter.if_, T.Guard: HostWriter.guard, T.SegMap: HostWriter.segmap,
    T.SegRed: HostWriter.segred, T.SegScan: HostWriter.segscan,
    S.Map: unsupported, S.Redomap: unsupported, S.Scanomap: unsupported,
}, absent=SOURCE_ONLY)
