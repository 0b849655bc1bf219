-- Records: literals (with field punning, nested), type abbreviations, field access (r.a, r.a.b, (f x).a),
-- record patterns in let, lambdas, loops and parameters (with annotations), functional updates
-- (r with a.b = v, let r.a = v), tuples as records with fields 0, 1, ..., equality, records in if and loops.
-- Entry points take and return a record's fields in Futhark's order: numeric names first, then by name.
-- ==
-- entry: basics
-- input { 3i32 2.5f32 }
-- output { 3i32 2.5f32 true 6i32 5.0f32 }
-- input { -1i32 0f32 }
-- output { -1i32 0f32 true -2i32 0f32 }

-- ==
-- entry: sorted_fields
-- input { 1i32 2f32 true }
-- output { 2f32 true 1i32 }

-- ==
-- entry: updates
-- input { 5i32 }
-- output { 5i32 10i32 7i32 0i32 5i32 10i32 11i32 }

-- ==
-- entry: tuples_are_records
-- input { 4i32 9i32 }
-- output { 9i32 4i32 13i32 9i32 true }

-- ==
-- entry: equality
-- input { 1i32 2i32 1i32 2i32 }
-- output { true false }
-- input { 1i32 2i32 2i32 1i32 }
-- output { false true }

-- ==
-- entry: branch_and_loop
-- input { true 10i32 }
-- output { 55i32 10i32 3.0f32 }
-- input { false 0i32 }
-- output { 0i32 0i32 -1.0f32 }

-- ==
-- entry: record_params
-- input { 3f32 4f32 1f32 2f32 }
-- output { 25f32 4f32 6f32 -1f32 }

-- ==
-- entry: with_arrays
-- input { [1i32, 2i32, 3i32] }
-- output { [1i32, 2i32, 3i32] 6i32 3i64 [2i32, 4i32, 6i32] 4i64 }
-- input { empty([0]i32) }
-- output { empty([0]i32) 0i32 0i64 empty([0]i32) 1i64 }

type pt = {x: f32, y: f32}
type labelled = {label: i32, pos: pt}

def norm2 (p: pt): f32 = p.x * p.x + p.y * p.y

def swap ({x, y}: pt): pt = {x = y, y = x}

def add ({x = x1, y = y1}: pt) ({x = x2: f32, y: f32}: pt): pt = {x = x1 + x2, y = y1 + y}

def mk (label: i32) (x: f32): labelled = {label, pos = {x, y = x * 2}}

entry basics (a: i32) (b: f32): (i32, f32, bool, i32, f32) =
  let r = {a, b}
  let s = {b = r.b, a = r.a}
  let {a = a2, b = b2} = s
  in (r.a, r.b, r == s, a2 + a2, (mk a2 b2).pos.x * 2)

-- The fields come out in Futhark's order: a, b, c (so the result is (b, c, a) as given).
entry sorted_fields (c: i32) (a: f32) (b: bool): {c: i32, a: f32, b: bool} = {c, b, a}

entry updates (v: i32): (i32, i32, i32, i32, i32, i32, i32) =
  let r = {outer = {inner = v, other = 2 * v}, flag = 0}
  let r2 = r with outer.other = 7
  let r3 = r2 with outer = {inner = 0, other = 0}
  let r.flag = 10
  let r.outer.inner = r.outer.inner + 6
  in (r2.outer.inner, r.flag, r2.outer.other, r3.outer.inner, v, r.flag, r.outer.inner)

entry tuples_are_records (a: i32) (b: i32): (i32, i32, i32, i32, bool) =
  let t = {0 = b, 1 = a}
  let {0 = x, 1 = y} = (a, b)
  let u = t with 1 = x + y
  in (t.0, t.1, u.1, y, t == (b, a))

entry equality (a: i32) (b: i32) (c: i32) (d: i32): (bool, bool) =
  let r = {x = a, y = {z = b}}
  let s = {y = {z = d}, x = c}
  in (r == s, r != s)

entry branch_and_loop (c: bool) (n: i32): (i32, i32, f32) =
  let r = if c then {sum = 0, count = 0, w = 3f32} else {count = 0, sum = 0, w = -1f32}
  let r = loop acc = r for i < n do acc with sum = acc.sum + i + 1 with count = acc.count + 1
  let {sum, count, w} = r
  let {sum, count, w} = loop {sum, count, w} for i < 2 do {sum, count, w = w + 1}
  in (sum, count, w - 2)

entry record_params (ax: f32) (ay: f32) (bx: f32) (by: f32): (f32, f32, f32, f32) =
  let a = {x = ax, y = ay}
  let b = {x = bx, y = by}
  let s = add a b
  let d = (\{x, y}: pt -> {x = x - by, y = y - bx - ax}) (swap a)
  in (norm2 a, s.x, s.y + 0, d.y)

-- An update may change the sizes of a field (not its type).
entry with_arrays [n] (xs: [n]i32): ([n]i32, i32, i64, [n]i32, i64) =
  let r = {data = xs, total = i32.sum xs, len = n}
  let doubled = r with data = map (* 2) r.data
  let grown = r with data = r.data ++ [0]
  in (r.data, r.total, r.len, doubled.data, length grown.data)

-- A field update whose value is an open expression (`if`, `let`, `match`), as accelerate's GUI programs write.
-- ==
-- entry: update_open
-- input { 3 }
-- output { 6 9 }
-- input { 0 }
-- output { 7 7 }

entry update_open (x: i32) : (i32, i32) =
  let s = {a = x, b = [1, 2]}
  let s = s with a = if x > 0 then 1 else 2
  let s = s with b = let q = copy s.b in q with [0] = 5
  let t = match x case 0 -> s with a = 7 case _ -> s with a = 9
  in (s.a + s.b[0], t.a)
