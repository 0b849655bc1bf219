-- Sum types and match: constructors with and without payloads (typed by an annotation, a parameter, the other
-- branch of an if, a function's return type), match on sums (nested payload patterns, literals, wildcards),
-- on integers, floats and tuples, match in a map (a kernel) and in a loop, arrays of sums, records holding
-- sums, == and != on sums, and an irrefutable constructor pattern in a let.
-- ==
-- entry: areas
-- input { [0.5f32, 1.5f32, 3.0f32, 2.0f32] }
-- output { [0.0f32, 3.0f32, 27.0f32, 4.0f32] }

-- ==
-- entry: walk
-- input { 6 }
-- output { 23 }
-- input { 0 }
-- output { 0 }

-- ==
-- entry: trees
-- input { [3, -1, 0, 5] }
-- output { [3, 0, 0, 5] 2i64 [3.0, 0.0, 0.0, 5.0] }

-- ==
-- entry: records
-- input { 4 }
-- output { 4 9.0f32 true }

-- ==
-- entry: pairs
-- input { [0, 0, 7, 7] [true, false, true, false] }
-- output { [1, 2, 3, 7] }

-- ==
-- entry: signs
-- input { [-3, 0, 4, -1] }
-- output { [-1, 0, 1, -1] [10, 10, 30, 20] }

-- ==
-- entry: equality
-- input { 2.0f32 }
-- output { true false true false true }

-- ==
-- entry: floats
-- input { [1.5, -2.0, 0.0] }
-- output { [1, 2, 3] }

-- ==
-- entry: boxed
-- input { 4 }
-- output { 5 }

-- ==
-- entry: sized
-- input { [1, 2, 3] true }
-- output { [2, 3, 4] }
-- input { [1, 2, 3] false }
-- output { [0, 0, 0] }

type shape = #circle f32 | #rect f32 f32 | #empty
type tree = #leaf | #node i32 (i32, bool) {w: f64}
type sign = #neg | #zero | #pos
type box = #box i32
type opt [n] = #some ([n]i32) | #none

def area (s: shape) : f32 =
  match s
  case #circle r -> 3 * r * r
  case #rect w h -> w * h
  case #empty -> 0

def weight (t: tree) : f64 =
  match t
  case #leaf -> 0
  case #node k (a, true) {w} -> f64.i32 (k + a) * w
  case #node k (_, false) _ -> f64.i32 k

def sign_of (x: i32) : sign =
  if x < 0 then #neg else if x == 0 then #zero else #pos

-- A constructor in a map: its type is that of area's parameter.
entry areas (xs: []f32) : []f32 =
  map (\x -> area (if x > 2 then #circle x else if x > 1 then #rect x 2 else #empty)) xs

-- A sum as a loop parameter, matched in the loop.
entry walk (n: i32) : i32 =
  let (_, acc) =
    loop (t, acc) = (#leaf : tree, 0) for i < n do
      let t' = match t
               case #leaf -> #node i (i, i % 2 == 0) {w = 1.5}
               case #node k _ _ -> if k > 2 then #leaf else #node (k + 1) (k, true) {w = 2}
      in (t', acc + i32.f64 (weight t'))
  in acc

-- An array of sums, filtered with == and matched in a map.
entry trees (xs: []i32) : ([]i32, i64, []f64) =
  let ts : []tree = map (\x -> if x > 0 then #node x (x, x > 4) {w = 0.5} else #leaf) xs
  let leaves = filter (== #leaf) ts
  in (map (\t -> match t case #leaf -> 0 case #node k _ _ -> k) ts, length leaves, map weight ts)

-- Records holding sums, updated with `with`.
entry records (x: i32) : (i32, f32, bool) =
  let r = {name = x, s = #rect 2 3 : shape}
  let r2 = r with s = #circle 1
  in (r.name, area r.s + area r2.s, r2.s != r.s)

-- match on a tuple, with literals and a binder.
entry pairs (as: []i32) (bs: []bool) : []i32 =
  map2 (\a b -> match (a, b)
                case (0, true) -> 1
                case (0, false) -> 2
                case (_, true) -> 3
                case (n, _) -> n) as bs

-- Constructors typed by a function's return type; match on a sum and on negative integer literals.
entry signs (xs: []i32) : ([]i32, []i32) =
  (map (\x -> match sign_of x
              case #neg -> -1
              case #zero -> 0
              case #pos -> 1) xs,
   map (\x -> match x
              case 0 -> 10
              case -1 -> 20
              case -3 -> 10
              case _ -> 30) xs)

entry equality (x: f32) : (bool, bool, bool, bool, bool) =
  let a : shape = #rect x 1
  let b : shape = #rect x 1
  let c : shape = #circle x
  let d : shape = #rect x 2
  in (a == b, a == c, a != c, a == d, (#empty : shape) == #empty)

entry floats (xs: []f64) : []i32 =
  map (\x -> match x
             case 1.5 -> 1
             case -2 -> 2
             case _ -> 3) xs

-- A constructor pattern in a let: box has no other constructor.
entry boxed (x: i32) : i32 =
  let #box y = (#box (x + 1) : box)
  in y

-- A payload that is an array: #none holds a blank array of size n.
entry sized [n] (xs: [n]i32) (b: bool) : [n]i32 =
  let o : opt [n] = if b then #some xs else #none
  in match o
     case #some ys -> map (+ 1) ys
     case #none -> replicate n 0
