-- Point-free definitions: entry points and functions defined as function values (eta-expanded entries).
-- ==
-- entry: acos_all
-- input { [1.0f32, 0.5f32] }
-- output { [0.0f32, 1.0471976f32] }

-- ==
-- entry: dot
-- input { [1,2,3] [4,5,6] }
-- output { 32 }

-- ==
-- entry: sum_inc
-- input { [1,2,3] }
-- output { 9 }

-- ==
-- entry: main
-- input { [1,2,3] }
-- output { [2,3,4] }
def dot_ (xs: []i32) (ys: []i32) = i32.sum (map2 (*) xs ys)
entry acos_all = map f32.acos
entry dot = dot_
entry sum_inc = \(xs: []i32) -> i32.sum (map (+1) xs)
def main = map (+1i32)

-- The body decides the parameters' types (futhark-benchmarks' micro/intra.fut: an unsuffixed literal that the
-- composition's second function fixes).
-- ==
-- entry: scan_reduce
-- input { [[1f32, 2f32], [3f32, 4f32]] }
-- output { [4f32, 10f32] }

entry scan_reduce = map (scan (+) 0 >-> f32.sum)
