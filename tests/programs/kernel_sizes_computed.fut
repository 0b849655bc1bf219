-- Arrays inside a kernel whose size the kernel computes from its inputs (+, -, *, /): pbbs'
-- maximalIndependentSet (`verts ++ [n]` in every thread), the fft library's `iota (n / radix)` and the sorts
-- library's blocks of `n / block_size` in a map; the host allocates them as the kernel computes them.
-- ==
-- entry: extended
-- input { [1, 2, 3] [0i64, 3i64, 5i64] }
-- output { [1, 6, 7] }

-- ==
-- entry: halves
-- input { [[1, 2, 3, 4], [5, 6, 7, 8]] }
-- output { [10, 26] }
-- input { [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]] }
-- output { [10, 30] }

entry extended [n] (verts: [n]i32) (ks: []i64) : []i32 =
  map (\k -> let extended = verts ++ [i32.i64 k]
             in extended[k % (n + 1)] + extended[n]) ks

entry halves [m] [n] (xss: [m][n]i32) : [m]i32 =
  map (\xs -> let pairs = tabulate (n / 2) (\i -> xs[2 * i] + xs[2 * i + 1])
              in i32.sum (loop pairs for _i < 2 do map (* 1) pairs)) xss
