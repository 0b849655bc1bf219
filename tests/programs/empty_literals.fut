-- Empty array literals without a type, as Futhark infers them: the element type from the uses, the inner sizes
-- from the other operand of `++`, the other branch of `if`, or the type annotated or returned.
-- ==
-- entry: appended
-- input { [1, 2] [[1f32, 2f32, 3f32]] } output { [1, 2] [[1f32, 2f32, 3f32]] }
-- input { empty([0]i32) empty([0][3]f32) } output { empty([0]i32) empty([0][3]f32) }

entry appended (xs: []i32) (ys: [][3]f32) = (xs ++ [], [] ++ ys)

-- ==
-- entry: branches
-- input { 3i64 } output { [0i64, 1i64, 2i64] [0f32, 1f32, 2f32] [[0i64, 0i64], [1i64, 1i64], [2i64, 2i64]] }
-- input { 0i64 } output { empty([0]i64) empty([0]f32) empty([0][2]i64) }

entry branches (n: i64) =
  let (ys, zs) = unzip (if n > 0 then zip (iota n) (map f32.i64 (iota n)) else [])
  let rows = if n == 0 then [] else map (\i -> [i, i]) (iota n)
  in (ys, zs, rows)

-- ==
-- entry: annotated
-- input { true } output { empty([0]bool) 0i64 2 }
-- input { false } output { [true] 0i64 2 }

def none (k: i32) : (i32, [0][2]i32) = (k, [])

entry annotated (b: bool) : ([]bool, i64, i32) =
  let grid: [][3]f64 = []
  in (if b then [] else [true], length grid, (none 2).0)

-- ==
-- entry: per_call
-- input { 2i64 } output { 0i64 0i64 [1i32, 2i32] [1i32] [2f32] }
-- input { 0i64 } output { 0i64 0i64 empty([0]i32) empty([0]i32) empty([0]f32) }

-- an empty literal in a function inlined at two calls takes each call's type (a record in one, i32 in the other)
def or_empty 't (n: i64) (xs: []t) : ([]t, i64) = if n == 0 then ([], n) else (xs, 0)

entry per_call (n: i64) =
  let (a, k) = or_empty n [1i32, 2i32]
  let (b, l) = or_empty n [(1i32, 2f32)]
  in (k, l, a, (unzip b).0, (unzip b).1)
