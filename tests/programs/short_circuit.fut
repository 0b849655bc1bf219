-- && and || evaluate their right operand only when needed (it would index out of bounds here).
-- ==
-- input { 5i64 [true,false,true] }
-- output { false true [false, true, true] }
entry main (i: i64) (bs: []bool) =
  let n = length bs
  in (i < n && bs[i], i >= n || bs[i], map (\j -> (j == n-1) || bs[j+1]) (iota n))
