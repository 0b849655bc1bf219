"""Updates of arrays (`a with [i] = v`, slices, chains of them in one write) and the memory of a kernel's result
that an in-place update then writes into its array (empty_in_region: codegen.placement).

Part of the runtime every compiled program carries: it imports only the standard library, numpy, pyopencl and
the runtime's own modules.
"""

import math

import numpy as np
import pyopencl as cl

from .arrays import (DeviceArray, copy_into, copy_many, destination, index, manifest, row_major_strides,
                     shape_text, span)
from .errors import ProgramError, fail

__all__ = ["empty_in_region", "update", "update_many"]


def empty_in_region(ctx, root, idxs, others, same, apart, points, shape, dtype, where=""):
    """Memory for a kernel's result that an in-place update then writes into root[idxs] (codegen.placement):
    that region of root itself, where it is in bounds, of the result's shape and type, row-major past the
    first `points` dimensions (the kernel's context: it writes each point's part through the point's
    indices, and the part as a row-major array), meets none of the regions the chain's other updates write
    (`others`, indices as update_many's), each array the kernel reads at the points it writes (`same`) is the
    region itself or lies elsewhere, and each other array read meanwhile (`apart`) lies elsewhere (in
    another buffer, or apart from the region in root's); else a new array."""
    region = _region(root, idxs)
    if (region is not None and region.shape == tuple(map(int, shape)) and region.dtype == np.dtype(dtype)
            and region.strides[points:] == row_major_strides(region.shape[points:])
            and all(_disjoint(_selection(idxs, root.shape), _selection(o, root.shape)) for o in others)
            and all(not _in_buffer(a, root) or _same_view(a, region) or _spans_apart(a, region) for a in same)
            and all(not _in_buffer(a, root) or _spans_apart(a, region) for a in apart)):
        return region
    return ctx.empty(shape, dtype, where)


def _region(arr, idxs):
    """The view arr[idxs] of an array's elements, or None where the indices are out of bounds (the update
    reports it)."""
    try:
        return index(None, arr, idxs) if len(idxs) < len(arr.shape) or any(isinstance(i, tuple) for i in idxs) \
            else None
    except ProgramError:
        return None


def _in_buffer(a, root) -> bool:
    return isinstance(a, DeviceArray) and a.buf is root.buf


def _same_view(a, b) -> bool:
    return a.offset == b.offset and a.shape == b.shape and a.strides == b.strides


def _spans_apart(a, b) -> bool:
    sa, sb = span(a), span(b)
    return sa is None or sb is None or sa[1] < sb[0] or sb[1] < sa[0]


def _disjoint(one, other) -> bool:
    """Whether two _selection's meet nowhere: in some dimension, their ranges of indices do not."""
    return any(a[1] < b[0] or b[1] < a[0] for a, b in zip(one, other))


def _placed(arr, idxs, value) -> bool:
    """Whether an update's value already lies where it is to be written (empty_in_region gave its memory)."""
    return (isinstance(value, DeviceArray) and value.buf is arr.buf and len(value.shape) > 0
            and (region := _region(arr, idxs)) is not None and _same_view(value, region))


def update(ctx, arr, idxs, value, where="", in_place=False):
    """arr with [idxs] = value, as a new array (or, in_place, arr updated: see destination); a slice index is
    (start, end, stride, size), as in index. A value made in its target (empty_in_region) is not copied."""
    if _placed(arr, idxs, value):
        return destination(ctx, arr, in_place)
    if any(isinstance(i, tuple) for i in idxs):
        return update_slice(ctx, arr, idxs, value, where, in_place)
    for k, i in enumerate(idxs):
        if not 0 <= int(i) < arr.shape[k]:
            shown = ", ".join(str(int(j)) for j in idxs)
            fail(where, f"Index [{shown}] out of bounds for array of shape {shape_text(arr.shape)}.")
    out = destination(ctx, arr, in_place, value)
    row_shape = tuple(arr.shape[len(idxs):])
    on_device = isinstance(value, DeviceArray)  # a kernel's result: copied on the device, never read back
    row = value if on_device else np.asarray(value, dtype=arr.dtype)
    _check_written(row.shape, row_shape, "a row", where)
    offset = sum(int(i) * s for i, s in zip(idxs, out.strides))
    size = arr.dtype.itemsize
    if not on_device:
        if row.size:
            ctx.upload(out.buf, row, offset * size)
    elif not row_shape:
        ctx.timed("incflat_copy_buffer", cl.enqueue_copy(ctx.queue, out.buf, row.buf, byte_count=size,
                                                         src_offset=row.offset * size, dst_offset=offset * size))
    else:
        copy_into(ctx, row, index(ctx, out, idxs, where))
    return out


def update_slice(ctx, arr, idxs, value, where="", in_place=False):
    """arr with [i:j:s, ...] = value: the slice is checked as index checks it, and value must have its shape.
    Copied on the device, from a host value through one upload."""
    target = index(ctx, arr, idxs, where)
    if not isinstance(value, DeviceArray):
        value = np.asarray(value, dtype=arr.dtype)
    _check_written(value.shape, target.shape, "a slice", where)
    out = destination(ctx, arr, in_place, value)
    if math.prod(target.shape):
        part = value if isinstance(value, DeviceArray) else ctx.to_device(value)
        if part.buf is out.buf:  # the value is a view of the array it is written into
            part = manifest(ctx, part)
        copy_into(ctx, part, index(ctx, out, idxs, where))
    return out


def _check_written(value_shape, target_shape, what: str, where):
    """An update's value must have the shape of what it replaces (`what`: a row or a slice)."""
    if tuple(value_shape) != tuple(target_shape):
        fail(where, f"cannot write a value of shape {shape_text(value_shape)} into {what} of shape "
             f"{shape_text(target_shape)}.")


def update_many(ctx, arr, updates, in_place=False):
    """arr with several updates made in turn, each (idxs, value, where) as update takes them, their values
    arrays (made before the first update: a value in arr's buffer holds arr's elements from before, which
    destination() keeps by copying arr): as one write, with their copies in one launch (copy_many), where
    their targets are disjoint (in some dimension, their ranges of indices are); else one update after
    another."""
    selections = [_selection(idxs, arr.shape) for idxs, _, _ in updates]
    disjoint = all(_disjoint(one, other) for k, one in enumerate(selections) for other in selections[k + 1:])
    if not disjoint:
        for idxs, value, where in updates:
            arr = update(ctx, arr, idxs, value, where, in_place=in_place)
            in_place = True  # the chain's later updates write into what the first made (codegen.host.chained)
        return arr
    # values made in their targets (empty_in_region) are there already, also in a copy destination() makes
    updates = [u for u in updates if not _placed(arr, u[0], u[1])]
    out = destination(ctx, arr, in_place, *(value for _, value, _ in updates))
    pairs = []
    for idxs, value, where in updates:
        target = index(ctx, out, idxs, where)
        _check_written(value.shape, target.shape, "a slice" if any(isinstance(i, tuple) for i in idxs) else "a row",
                       where)
        if math.prod(target.shape):
            pairs.append((value, target))
    copy_many(ctx, pairs)
    return out


def _selection(idxs, shape) -> list:
    """Per dimension of an update's target, the lowest and highest index it writes (a whole dimension where
    idxs stops short); an empty slice writes nothing: (1, 0)."""
    out = []
    for k, d in enumerate(shape):
        if k >= len(idxs):
            out.append((0, int(d) - 1))
        elif isinstance(idxs[k], tuple):
            start, _, stride, size = (int(v) for v in idxs[k])
            last = start + (size - 1) * stride
            out.append((min(start, last), max(start, last)) if size > 0 else (1, 0))
        else:
            out.append((int(idxs[k]), int(idxs[k])))
    return out
