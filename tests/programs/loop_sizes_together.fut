-- Loop parameters whose sizes change together (pbbs' minSpanningForest and maximalMatching): the body filters
-- two arrays zipped and returns them unzipped, with one size; they start with one size, or with anonymous sizes
-- (`[]` parameters, coerced to one at the loop, checked at run time), or one anonymous and one not; a function
-- whose size parameter a later argument fixes where an earlier one's size is anonymous.
-- ==
-- entry: shrink
-- input { [5, 3, 8, 1, 9, 2] [0i64, 1i64, 2i64, 3i64, 4i64, 5i64] }
-- output { 28i64 3i64 }
-- input { [1, 2] [7i64] }
-- error: coerce

-- ==
-- entry: fixed
-- input { [5, 3, 8, 1, 9, 2] }
-- output { 28i64 }

def pairs_sum [k] (xs: [k]i32) (ids: [k]i64) : i64 = i64.sum (map2 (\x i -> i64.i32 x + i) xs ids)

def drop_small (xs: []i32) (ids: []i64) =
  loop (xs, ids) while length xs > 0 && i32.minimum xs < 4 do
    let (xs', ids') = zip xs ids |> filter (\(x, _) -> x > i32.minimum xs) |> unzip
    in (xs', ids')

entry shrink (xs: []i32) (ids: []i64) : (i64, i64) =
  let (xs', ids') = drop_small xs ids
  in (pairs_sum xs' ids', length xs')

entry fixed [n] (xs: [n]i32) : i64 =
  let (xs', ids') = drop_small xs (iota n)
  in pairs_sum xs' ids'

-- Two parameters that start with one size by chance (two `[]`, Futhark's tests/issue1755.fut) and change apart:
-- each keeps its own size (they were taken as one, and a run failed its size check).
-- ==
-- entry: apart
-- input { 2i64 } output { [3i64, 3i64, 2i64] [2i64, 1i64] }

entry apart (n: i64) =
  let (_, shapes, lens) =
    loop (xs, shapes, lens) = ([1i64], [], []) for _i < n do
      let s = map (+ 1) xs
      in (s ++ s, s ++ shapes, [length s] ++ lens)
  in (shapes, lens)
